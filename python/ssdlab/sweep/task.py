"""What a sweep's worker runs: a run spec's JSON in, plain result rows out.

Nothing compiled crosses a process boundary: the task's arguments are two strings (the run's
key and its :class:`~ssdlab.api.RunSpec` as JSON, the seed inside), its answer a dict of
lists, numbers and strings. A run that fails is an answer with its ``error``, never an
exception, so one bad run cannot stop a sweep.
"""

from __future__ import annotations

import json
import signal
import time
from typing import Any

#: clat percentiles in every row: ``clat_p50_ns`` … ``clat_p99.99_ns``.
PERCENTILES = (50.0, 90.0, 95.0, 99.0, 99.9, 99.99)
DIRECTIONS = ("read", "write", "trim", "sync")


def worker_init(sweep_pid: int | None = None) -> None:
    """A local worker's initializer. Ctrl-C is the sweep's to handle (it stops the workers
    itself), so that an interrupted run is never taken for a failed one. The worker ends when
    the sweep's process ``sweep_pid`` does, however it ends (SIGKILL included): its forkserver
    and resource tracker then end too, as they do once their last worker has."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if sweep_pid is not None:
        import threading

        threading.Thread(target=_end_with, args=(sweep_pid,), name="ssdlab-sweep-watch", daemon=True).start()


def _end_with(pid: int) -> None:
    """Wait for process ``pid`` to end, then end this one at once (a run in flight included:
    nobody is left to take its answer)."""
    import os

    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        os._exit(1)
    except (AttributeError, OSError):  # no pidfd (not Linux, or an old kernel): poll
        while True:
            time.sleep(1.0)
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                os._exit(1)
            except OSError:
                pass
    import select

    select.select([fd], [], [])  # readable when the process has ended
    os._exit(1)


#: the initializer's old name
ignore_sigint = worker_init


def error_text(e: BaseException) -> str:
    """A failure as the ``error`` column says it: the message (the type too, for anything
    that is not a plain input error)."""
    message = str(e).strip()
    if isinstance(e, ValueError) and message:
        return message
    return f"{type(e).__name__}: {message}" if message else type(e).__name__


def run_task(key: str, spec_json: str) -> dict[str, Any]:
    """Run one spec. The answer: ``key``, ``rows`` (one per reporting unit and direction),
    ``error`` (None, or why the run failed), ``sim_s`` (time in the simulation) and
    ``task_s`` (time in this call)."""
    start = time.perf_counter()
    sim = 0.0
    try:
        from ..api import RunSpec, execute

        spec = RunSpec.model_validate_json(spec_json)
        t = time.perf_counter()
        result = execute(spec)
        sim = time.perf_counter() - t
        rows, error = result_rows(result), None
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as e:  # the core's panics are BaseExceptions too
        rows, error = [], error_text(e)
    return {"key": key, "rows": rows, "error": error, "sim_s": sim, "task_s": time.perf_counter() - start}


def _cell(value: Any) -> Any:
    """A value as a Parquet cell: numbers, strings and None as they are; lists as JSON."""
    if isinstance(value, (list, tuple, dict)):
        return json.dumps(value, separators=(",", ":"))
    return value


def _device_columns(result, name: str) -> dict[str, Any]:
    iostat = result.iostat(name)
    internal = result.internal(name)
    cols: dict[str, Any] = {"util": iostat.get("%util"), "waf": internal.get("waf")}
    cols.update({f"iostat.{k}": v for k, v in iostat.items() if k != "%util"})
    cols.update({f"internal.{k}": _cell(v) for k, v in internal.items() if k not in ("name", "waf")})
    return cols


def result_rows(result) -> list[dict[str, Any]]:
    """One row per fio reporting unit (a job, or a group under group_reporting) and
    direction that did I/O: fio's figures, then iostat's and the internal report of the
    device the job ran on, then the run's own. A run without I/O is one row of the last."""
    from .. import __version__

    run = {
        "sim_time_s": result.elapsed_ns / 1e9,
        "events": result.core.get("events"),
        "warnings": "\n".join(result.warnings) or None,
        "ssdlab_version": __version__,
    }
    jobs = result.spec.core["jobs"]
    names = result.device_names
    devices: dict[str, dict[str, Any]] = {}
    rows: list[dict[str, Any]] = []
    for index, u in enumerate(result.units):
        target = jobs[u.members[0]].get("target", 0) if u.members and u.members[0] < len(jobs) else 0
        device = names[target] if target < len(names) else names[0]
        if device not in devices:
            devices[device] = _device_columns(result, device)
        seconds = u.runtime_ns / 1e9
        for d in DIRECTIONS:
            r = u.sync if d == "sync" else u.dirs[d]
            if r.ios == 0:
                continue
            pct = r.percentiles(list(PERCENTILES))
            rows.append({
                "unit": index, "jobname": u.name, "groupid": u.group_id, "clones": len(u.members),
                "direction": d, "device": device,
                "ios": r.ios, "io_bytes": r.bytes,
                "iops": r.ios / seconds if seconds else 0.0,
                "bw_bytes": r.bytes / seconds if seconds else 0.0,
                "runtime_s": seconds,
                "clat_mean_ns": r.clat.mean, "clat_stddev_ns": r.clat.stddev,
                "clat_min_ns": r.clat.min, "clat_max_ns": r.clat.max,
                **{f"clat_p{p:g}_ns": pct[f"{p:f}"] for p in PERCENTILES},
                "lat_mean_ns": r.lat.mean, "lat_max_ns": r.lat.max, "slat_mean_ns": r.slat.mean,
                **devices[device],
                **run,
            })
    return rows or [{"direction": None, **run}]
