"""What a job's options say about fio's report and log files, as opposed to its I/O.

fio keeps these per job: how often it samples bandwidth and IOPS (``bwavgtime``,
``iopsavgtime``, 500 ms by default), which log files it writes (``write_bw_log``,
``write_iops_log``, ``write_lat_log``, averaged over ``log_avg_msec``), the latency target it
reports, the engine and the depth it prints. :func:`job_report` reads them from a job's
options into a :class:`JobReport`.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from ..units import ValueProblem, parse_fio_count, parse_fio_time_us
from .errors import FioJobError
from .options import JobState, fio_time_read

DEFAULT_AVG_MSEC = 500  # fio's bwavgtime and iopsavgtime


class JobReport(BaseModel):
    """One clone's reporting options, in fio's units."""

    model_config = ConfigDict(extra="forbid")

    ioengine: str = "psync"
    kb_base: int = 1024
    #: bandwidth and IOPS sampling windows (fio's bw_avg_time, iops_avg_time), ms; 0: a
    #: sample per I/O (fio's rule for a log written per I/O)
    bw_avg_msec: int = DEFAULT_AVG_MSEC
    iops_avg_msec: int = DEFAULT_AVG_MSEC
    #: log averaging window, ms; 0 = a line per I/O
    log_avg_msec: int = 0
    #: log file prefixes (None: no such log; the job's name when the option is bare)
    bw_log: str | None = None
    iops_log: str | None = None
    lat_log: str | None = None
    log_offset: bool = False
    per_job_logs: bool = True
    #: fio's log_max_value: 0 the window's mean, 1 its maximum, 2 both
    log_max_value: int = 0
    thread: bool = False
    description: str = ""
    #: a replay's header: what its trace sends (rw, and each direction's smallest and largest
    #: length), in place of its generated job's defaults
    header_rw: str | None = None
    header_lengths: tuple[tuple[int, int], tuple[int, int], tuple[int, int]] | None = None
    latency_target_ns: int = 0
    latency_window_us: int = 0
    latency_percentile: float = 100.0
    iodepth_batch_complete_min: int = 1
    #: continue_on_error other than none: fio then reports the job's errors (an "errors" line,
    #: JSON total_err and first_error); the simulation still stops a job at its first error
    continue_on_error: bool = False
    #: fio's steady-state test (``steadystate=CRITERION:LIMIT[%]``, ``ss_dur``, ``ss_ramp``,
    #: ``ss_interval``): ``ss_dur_s`` 0 means none (see :mod:`ssdlab.analysis.steadystate`)
    ss_criterion: str = "iops_slope"
    ss_limit: float = 0.01
    ss_percent: bool = True
    ss_dur_s: int = 0
    ss_ramp_us: int = 0
    ss_interval_s: int = 1
    #: which latencies fio records (``disable_lat``/``disable_clat``/``disable_slat``, all
    #: three with ``gtod_reduce``): a disabled one is reported with no samples
    disable_lat: bool = False
    disable_clat: bool = False
    disable_slat: bool = False
    #: which latencies get percentiles (``clat_percentiles``, ``lat_percentiles``,
    #: ``slat_percentiles``), as written: :mod:`ssdlab.fioout.view` applies fio's rules
    clat_percentiles: bool = True
    lat_percentiles: bool = False
    slat_percentiles: bool = False
    #: fio's ``unified_rw_reporting``: 0 per direction, 1 the directions merged into one
    #: "mixed" one, 2 both
    unified_rw: int = 0


def _int(st: JobState, name: str, default: int, minimum: int = 0) -> int:
    raw = st.report.get(name)
    if raw is None:
        return default
    try:
        value = parse_fio_count(raw, st.kb_base) if raw.strip() else default
    except ValueProblem as exc:
        raise _error(st, name, str(exc)) from None
    if value < minimum:
        raise _error(st, name, f"must be at least {minimum}, got {value}")
    return value


def _flag(st: JobState, name: str, default: bool) -> bool:
    raw = st.report.get(name)
    if raw is None:
        return default
    return raw.strip() in ("", "1") or (raw.strip().isdigit() and int(raw) != 0)


def _time_us(st: JobState, name: str) -> int:
    raw = st.report.get(name)
    if raw is None or not raw.strip():
        return 0
    try:
        return fio_time_read(raw)[0]
    except ValueProblem as exc:
        raise _error(st, name, str(exc)) from None


#: fio's ``log_window_value`` (alias ``log_max_value``, once a boolean): what a windowed log
#: line gives.
LOG_WINDOW_VALUES = {"avg": 0, "mean": 0, "0": 0, "max": 1, "1": 1, "both": 2, "2": 2}


def _log_window_value(st: JobState) -> int:
    raw = st.report.get("log_window_value")
    if raw is None or not raw.strip():
        return 0
    value = LOG_WINDOW_VALUES.get(raw.strip().lower())
    if value is None:
        raise _error(st, "log_window_value", f"expected avg, max or both (or 0, 1, 2), got '{raw.strip()}'")
    return value


def _error(st: JobState, name: str, message: str) -> FioJobError:
    where = st.where.get(name)
    return FioJobError(message, path=where.path if where else None, line=where.line if where else None,
                       option=name)


SS_CRITERIA = ("iops", "iops_slope", "bw", "bw_slope")
#: fio 3.42's latency criteria: accepted, but not judged here (warned in resolve)
SS_LATENCY_CRITERIA = ("lat", "lat_slope")


def _steadystate(st: JobState) -> dict:
    """fio's steady-state options: ``steadystate=iops|iops_slope|bw|bw_slope:LIMIT[%]``
    (default ``iops_slope:0.01%``), ``ss_dur`` and ``ss_ramp`` (seconds when bare; fio keeps
    whole seconds of ``ss_dur``), ``ss_interval`` (fio 3.42; 1 s by default)."""
    out: dict = {}
    raw = st.report.get("steadystate")
    if raw is not None:
        crit, colon, limit = raw.strip().partition(":")
        crit = crit.strip().lower()
        if crit not in SS_CRITERIA + SS_LATENCY_CRITERIA or not colon:
            names = "|".join(SS_CRITERIA + SS_LATENCY_CRITERIA)
            raise _error(st, "steadystate", f"expected {names}:LIMIT[%] (e.g. iops:2%), got '{raw}'")
        limit = limit.strip()
        percent = limit.endswith("%")
        try:
            value = float(limit.rstrip("%"))
        except ValueError:
            raise _error(st, "steadystate", f"limit: expected a number, optionally with %, got '{limit}'") from None
        if value < 0:
            raise _error(st, "steadystate", f"limit must not be negative, got '{limit}'")
        out.update(ss_criterion=crit, ss_limit=value, ss_percent=percent)
    for key, option in (("ss_dur", "steadystate_duration"), ("ss_ramp", "steadystate_ramp_time"),
                        ("ss_interval", "steadystate_check_interval")):
        text = st.report.get(option)
        if text is None or not text.strip():
            continue
        try:
            us = int(parse_fio_time_us(text, seconds_default=True, notes=[]))
        except ValueProblem as exc:
            raise _error(st, option, str(exc)) from None
        if key == "ss_ramp":
            out["ss_ramp_us"] = us
        elif key == "ss_dur":
            out["ss_dur_s"] = us // 1_000_000
        else:
            if us < 1_000_000 or us % 1_000_000:
                raise _error(st, option, f"expected whole seconds (ssdlab checks steady state on 1 s samples), got '{text}'")
            out["ss_interval_s"] = us // 1_000_000
    dur, step = out.get("ss_dur_s", 0), out.get("ss_interval_s", 1)
    if dur and dur % step:
        raise _error(st, "steadystate_duration", f"must be a multiple of ss_interval ({step} s), got {dur} s")
    return out


#: fio 3.33's words for unified_rw_reporting (its parser compares the part before a ':' or ',')
UNIFIED_RW = {"none": 0, "0": 0, "mixed": 1, "1": 1, "both": 2, "2": 2}


def _latency_options(st: JobState) -> dict:
    """Which latencies are recorded and which get percentiles. ``gtod_reduce`` disables all
    three latencies, as fio's does (an explicit ``disable_*=0`` written after it wins)."""
    reduce = _flag(st, "gtod_reduce", False)
    unified = st.report.get("unified_rw_reporting", "none").strip().replace(",", ":").split(":", 1)[0]
    return {
        "disable_lat": _flag(st, "disable_lat", reduce),
        "disable_clat": _flag(st, "disable_clat", reduce),
        "disable_slat": _flag(st, "disable_slat", reduce),
        "clat_percentiles": _flag(st, "clat_percentiles", True),
        "lat_percentiles": _flag(st, "lat_percentiles", False),
        "slat_percentiles": _flag(st, "slat_percentiles", False),
        "unified_rw": UNIFIED_RW.get(unified, 0),
    }


def job_report(st: JobState, name: str) -> JobReport:
    """The reporting options of a job named ``name`` (its clones share them)."""
    logs = {}
    for key, option in (("bw_log", "write_bw_log"), ("iops_log", "write_iops_log"), ("lat_log", "write_lat_log")):
        if option in st.report:
            logs[key] = st.report[option].strip() or name
    percentile = st.report.get("latency_percentile", "").strip()
    log_avg = _int(st, "log_avg_msec", 0)
    bw_avg = _int(st, "bwavgtime", DEFAULT_AVG_MSEC, 1)
    iops_avg = _int(st, "iopsavgtime", DEFAULT_AVG_MSEC, 1)
    # fio samples a logged quantity at the log's window, unless the sampling window was set
    # (then the log's window is the smaller of the two; ssdlab writes all of a job's logs
    # at log_avg_msec); a log written per I/O makes every I/O a sample
    if "bw_log" in logs and "bwavgtime" not in st.report:
        bw_avg = log_avg
    if "iops_log" in logs and "iopsavgtime" not in st.report:
        iops_avg = log_avg
    return JobReport(
        ioengine=st.ioengine,
        kb_base=st.kb_base,
        bw_avg_msec=bw_avg,
        iops_avg_msec=iops_avg,
        log_avg_msec=log_avg,
        log_offset=_flag(st, "log_offset", False),
        per_job_logs=_flag(st, "per_job_logs", True),
        log_max_value=_log_window_value(st),
        thread=_flag(st, "thread", False),
        description=st.report.get("description", ""),
        latency_target_ns=_time_us(st, "latency_target") * 1000,
        latency_window_us=_time_us(st, "latency_window"),
        latency_percentile=float(percentile) if percentile else 100.0,
        iodepth_batch_complete_min=_int(st, "iodepth_batch_complete_min", 1),
        continue_on_error=st.report.get("continue_on_error", "none").strip().lower() not in ("none", "0"),
        **_steadystate(st),
        **_latency_options(st),
        **logs,
    )
