"""fio's terse output, version 3 (fio's default ``--terse-version``): one line per reporting
unit, fields separated by ``;``, in the order fio's HOWTO lists them:

    3;fio version;jobname;groupid;error;
    READ status (41 fields);WRITE status (41 fields);
    usr;sys;ctx;majf;minf;IO depths (7);latency us (10, the ns buckets folded into the first);
    latency ms (12);then per disk: name;read ios;write ios;read merges;write merges;
    read ticks;write ticks;in_queue;util (an array adds: slaves;its members' averages);
    [description]

A direction's 41 fields: io KiB;bw KiB/s;iops;runtime ms;slat min;max;mean;stdev (us);
clat min;max;mean;stdev (us);20 clat percentiles as ``P%=us`` (``0%=0`` past the list);
lat min;max;mean;stdev (us);bw min;max;share of the group %;mean;stdev (KiB/s).
"""

from __future__ import annotations

from ..results import FIO_VERSION, RunResult
from .view import FioDir, FioGroup, FioUnit, build_view

TERSE_VERSION = 3
PERCENTILE_FIELDS = 20  # fio's FIO_IO_U_LIST_MAX_LEN


def _lat(s) -> str:
    if not s.n:
        return ";0;0;0.000000;0.000000"
    return f";{int(s.min) // 1000};{int(s.max) // 1000};{s.mean / 1000:f};{s.stddev / 1000:f}"


def _ddir(fu: FioUnit, g: FioGroup, d: str, plist: list[float]) -> str:
    fd: FioDir = fu.dirs[d]
    r = fd.res
    bw = fd.bw_bytes() // 1024
    out = f";{r.bytes >> 10};{bw};{fd.iops_int()};{fd.runtime_ms}"
    out += _lat(fu.slat(d))
    out += _lat(fu.clat(d))
    # fio takes them even from no samples (all 0), and prints "0%=0" only past the list
    of = fu.terse_percentiles_of()
    pct = sorted(r.percentiles(plist, of).items(), key=lambda kv: float(kv[0])) if of else []
    for i in range(PERCENTILE_FIELDS):
        if i < len(pct):
            out += f";{float(pct[i][0]):f}%={int(pct[i][1]) // 1000}"
        else:
            out += ";0%=0"
    out += _lat(fu.lat(d))
    s = fd.bw
    if s.n:
        agg = g.agg(fu.agg_dir(d))
        share = min(100.0, s.mean * 100 / (agg // 1024)) if agg // 1024 else 100.0
        out += f";{int(s.min)};{int(s.max)};{share:f}%;{s.mean:f};{s.stddev:f}"
    else:
        out += ";0;0;0.000000%;0.000000;0.000000"
    return out


def _disks(r: RunResult) -> str:
    out = ""
    for u in r.disk_util():
        out += (f";{u['name']};{u['read_ios']};{u['write_ios']};{u['read_merges']};{u['write_merges']};"
                f"{u['read_ticks']};{u['write_ticks']};{u['in_queue']};{u['util']:3.2f}%")
        if "aggr_util" in u:
            out += (f";slaves;{u['aggr_read_ios']};{u['aggr_write_ios']};{u['aggr_read_merges']};"
                    f"{u['aggr_write_merge']};{u['aggr_read_ticks']};{u['aggr_write_ticks']};"
                    f"{u['aggr_in_queue']};{u['aggr_util']:3.2f}%")
    return out


def format_terse(r: RunResult) -> str:
    units, groups = build_view(r)
    disks = _disks(r)
    lines = []
    for fu in units:
        g = groups[fu.unit.group_id]
        line = f"{TERSE_VERSION};{FIO_VERSION};{fu.name};{fu.unit.group_id};{fu.error}"
        for d in fu.shown_dirs(with_trim=False):  # version 3 has no trim fields
            line += _ddir(fu, g, d, r.percentiles_list)
        line += f";{fu.usr_cpu:f}%;{fu.sys_cpu:f}%;{fu.ctx};{fu.majf};{fu.minf}"
        line += "".join(f";{v:3.1f}%" for v in fu.depth_dist())
        lat_n, lat_u, lat_m = fu.latency_dist()
        total = sum(fu.total_ios()[:3])
        ns_share = 0.0
        if total:
            ns_share = 100.0 * sum(c for v, c in fu.latency_hist().items() if v < 1000) / total
        lat_u = [lat_u[0] + ns_share] + lat_u[1:]
        line += "".join(f";{v:3.2f}%" for v in lat_u)
        line += "".join(f";{v:3.2f}%" for v in lat_m)
        line += disks
        if fu.report.continue_on_error:  # fio adds the errors only then, before the description
            line += f";{fu.total_errors()};{fu.error}"
        if fu.report.description:
            line += f";{fu.report.description}"
        lines.append(line)
    return "\n".join(lines) + "\n"
