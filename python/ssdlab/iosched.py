"""Linux I/O schedulers and block-queue settings, by their sysfs names and units.

A drive's scheduler is named as ``/sys/block/*/queue/scheduler`` names it; its tunables as
the files of ``/sys/block/*/queue/iosched/`` (times in ms, sizes in KiB, as sysfs takes
them), the queue's own settings as ``/sys/block/*/queue/`` (``nomerges``,
``max_sectors_kb``, ``nr_requests``, ``read_ahead_kb``). On the command line they are ``--scheduler cfq --host-set
iosched.slice_idle=0 --host-set queue.nomerges=2``; in a system file ``scheduler = "cfq"``,
``iosched = { slice_idle = 0 }`` and ``queue = { nomerges = 2 }`` on a drive.

Defaults are the kernels': ``noop``, ``deadline``, ``anticipatory`` and ``cfq`` as Linux 2.6.28
shipped them
(December 2008, the legacy single-queue block layer), ``none``, ``mq-deadline``, ``kyber`` and
``bfq`` as in Linux 6.x (blk-mq).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# name -> tunable -> (unit, default). Units: "ms" (sysfs milliseconds), "ns" (nanoseconds, as
# kyber's files take them), "kb", "int", "bool".
_DEADLINE = {
    "read_expire": ("ms", 500),
    "write_expire": ("ms", 5000),
    "fifo_batch": ("int", 16),
    "writes_starved": ("int", 2),
    "front_merges": ("bool", 1),
}
SCHEDULERS: dict[str, dict[str, tuple[str, int]]] = {
    "none": {},
    "noop": {},
    "deadline": _DEADLINE,
    "mq-deadline": _DEADLINE,
    "anticipatory": {
        "read_expire": ("ms", 125),
        "write_expire": ("ms", 250),
        "read_batch_expire": ("ms", 500),
        "write_batch_expire": ("ms", 125),
        "antic_expire": ("ms", 6),
    },
    "kyber": {
        "read_lat_nsec": ("ns", 2_000_000),
        "write_lat_nsec": ("ns", 10_000_000),
    },
    "bfq": {
        "slice_idle": ("ms", 8),
        "timeout_sync": ("ms", 125),
        "max_budget": ("int", 0),
        "back_seek_max": ("kb", 16384),
        "back_seek_penalty": ("int", 2),
        "fifo_expire_sync": ("ms", 125),
        "fifo_expire_async": ("ms", 250),
        "strict_guarantees": ("bool", 0),
    },
    "cfq": {
        "quantum": ("int", 4),
        "fifo_expire_sync": ("ms", 125),
        "fifo_expire_async": ("ms", 250),
        "back_seek_max": ("kb", 16384),
        "back_seek_penalty": ("int", 2),
        "slice_sync": ("ms", 100),
        "slice_async": ("ms", 40),
        "slice_async_rq": ("int", 2),
        "slice_idle": ("ms", 8),
    },
}
# setting -> (least, most, default)
# nr_requests 0: the kernel's default for the scheduler (128 on the legacy block layer, twice
# the device's depth up to 256 under mq-deadline, no limit of its own under none).
# sched_cpu_ns (ssdlab's, not sysfs): host CPU time per bio in the scheduler, under the queue's
# lock; unset: the scheduler's own figure (docs/hdd-and-schedulers.md).
# read_ahead_kb unset: the kernel's default for the device, the host's read_ahead_kb raised on
# an md array to twice its stripe (docs/page-cache.md).
# max_segments is the driver's (read-only in sysfs; settable here to ask "what if"): 128,
# BLK_MAX_SEGMENTS, caps a request of 4 KiB pages at 512 KiB.
QUEUE = {"nomerges": (0, 2, 0), "max_sectors_kb": (4, 1 << 22, 1280), "max_segments": (1, 65535, 128),
         "nr_requests": (0, 1 << 20, 0),
         "sched_cpu_ns": (0, 1 << 30, None), "read_ahead_kb": (0, 1 << 20, None)}
_UNIT_WORDS = {"ms": "milliseconds", "ns": "nanoseconds", "kb": "KiB", "int": "a whole number", "bool": "0 or 1"}


class SchedulerError(ValueError):
    """A scheduler or setting that does not exist, or a value it cannot take."""


def check_name(name: str) -> str:
    if name not in SCHEDULERS:
        raise SchedulerError(f"scheduler {name!r}: expected one of {', '.join(SCHEDULERS)}")
    return name


def _int(key: str, value: Any, what: str) -> int:
    if isinstance(value, bool):
        return int(value)
    try:
        v = int(str(value).strip(), 10)
    except ValueError:
        raise SchedulerError(f"{key}={value!r}: expected {what}") from None
    if v < 0:
        raise SchedulerError(f"{key}={value!r}: expected {what}, not negative")
    return v


# Tunables Linux has that ssdlab does not model: the value it behaves as, and why.
_FIXED = {
    ("bfq", "low_latency"): (0, "bfq's weight raising of interactive and soft real-time processes is"
                                " not modelled; ssdlab runs bfq as with low_latency=0"),
}


def scheduler_core(name: str, tunables: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The core's description of scheduler ``name`` with ``tunables`` (sysfs names and units);
    every tunable is sent, the kernel's default where not set."""
    table = SCHEDULERS[check_name(name)]
    tunables = dict(tunables or {})
    for (sched, key), (value, why) in _FIXED.items():
        if sched == name and key in tunables:
            given = tunables.pop(key)
            if _int(f"iosched.{key}", given, "a whole number") != value:
                raise SchedulerError(f"iosched.{key}={given!r}: {why}")
    for key in tunables or {}:
        if key not in table:
            known = ", ".join(table) if table else "none"
            raise SchedulerError(f"iosched.{key}: {name} has no such tunable (it has: {known})")
    core: dict[str, Any] = {"name": name}
    for key, (unit, default) in table.items():
        value = (tunables or {}).get(key, default)
        v = _int(f"iosched.{key}", value, _UNIT_WORDS[unit])
        if unit == "ms":
            core[f"{key}_ns"] = v * 1_000_000
        elif unit == "kb":
            core[f"{key}_kb"] = v
        elif unit == "bool":
            if v > 1:
                raise SchedulerError(f"iosched.{key}={value!r}: expected 0 or 1")
            core[key] = bool(v)
        else:
            core[key] = v
    return core


def queue_core(settings: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The core's description of a block queue's own settings (defaults where not set)."""
    for key in settings or {}:
        if key not in QUEUE:
            raise SchedulerError(f"queue.{key}: no such setting (known: {', '.join(QUEUE)})")
    core: dict[str, Any] = {}
    for key, (lo, hi, default) in QUEUE.items():
        value = (settings or {}).get(key, default)
        if value is None:
            core[key] = None
            continue
        v = _int(f"queue.{key}", value, f"a whole number from {lo} to {hi}")
        if not lo <= v <= hi or (key == "nr_requests" and 0 < v < 4):
            raise SchedulerError(f"queue.{key}={value!r}: expected {lo} to {hi}"
                                 + (" (and at least 4 unless 0)" if key == "nr_requests" else ""))
        core[key] = v
    return core


#: ``--host-set`` shorthands for host-profile keys: ``mem=8GiB`` is the host's RAM.
HOST_ALIASES = {"mem": "memory.ram"}
#: The host profile's keys outside its sections (``memory.*`` keys are dotted).
HOST_TOP_KEYS = ("hz", "io_overhead", "io_overhead_cv", "submit", "reap")


def split_host_sets(sets: Mapping[str, Any] | None) -> tuple[dict[str, Any], dict[str, Any], dict[str, str]]:
    """``--host-set`` keys split into scheduler tunables (``iosched.``), queue settings
    (``queue.``) and keys of the host profile (``memory.ram``, ``memory.cpus``, ``hz``, or
    ``mem``, short for ``memory.ram``), which :func:`ssdlab.config.profile.load_host` applies
    over the profile's own values."""
    iosched: dict[str, Any] = {}
    queue: dict[str, Any] = {}
    host: dict[str, str] = {}
    for key, value in (sets or {}).items():
        group, _, name = key.partition(".")
        if group == "iosched" and name:
            iosched[name] = value
        elif group == "queue" and name:
            queue[name] = value
        elif key in HOST_ALIASES:
            host[HOST_ALIASES[key]] = str(value)
        elif key in HOST_TOP_KEYS or (group == "memory" and name and all(name.split("."))):
            host[key] = str(value)
        else:
            raise SchedulerError(f"--host-set {key}={value}: expected iosched.TUNABLE=VALUE, queue.SETTING=VALUE,"
                                 " mem=SIZE or a host profile key (memory.cpus=4, hz=250)")
    return iosched, queue, host
