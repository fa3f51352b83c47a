"""A file workload run's JSON (``ssdlab run SCENARIO --output-format json``, written by
:func:`ssdlab.filereport.as_json`) as pydantic models, and its one reader (:func:`check`):
``ssdlab report`` reads such a run only through it.

The models name every field the report's page uses, with its type and range: counts whole
numbers >= 0, rates, shares and times finite numbers >= 0, names strings. Keys they do not
name are allowed (an operation's own options); a power cut's report is the core's
(``core_output.PowerCutReport``). A file that fails names
itself, the field (``threads[0].ops[1].bytes``) and what was expected, in one line
(:class:`~ssdlab.fioout.schema.RunFileError`), as fio runs' reader does.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError, model_validator

from .core_output import PowerCutReport
from .fioout.schema import _CONFIG, Count, Number, RunFileError, describe

__all__ = ["FileRun", "check", "is_file_run"]


class Cpu(BaseModel):
    """The host's CPUs over the run or an interval, as sar -u and /proc/loadavg give them."""

    model_config = _CONFIG
    start_ns: Count
    end_ns: Count
    busy: Number
    iowait: Number
    idle: Number
    load: list[Number]
    #: tasks active on average over the interval (what the load average settles to)
    active: Number

    @model_validator(mode="after")
    def _three_loads(self) -> "Cpu":
        if len(self.load) != 3:
            raise ValueError(f"load: expected three numbers (1, 5 and 15 minutes), got {len(self.load)}")
        return self


class CoreShare(BaseModel):
    """One core's shares of the run, as sar -P ALL averages them: each at most 1, the three
    the core's whole time."""

    model_config = _CONFIG
    busy: Number
    iowait: Number
    idle: Number

    @model_validator(mode="after")
    def _whole_time(self) -> "CoreShare":
        total = self.busy + self.iowait + self.idle
        if max(self.busy, self.iowait, self.idle) > 1 or abs(total - 1) > 1e-6:
            raise ValueError(f"busy + iowait + idle: expected shares that sum to 1, got {total:g}")
        return self


class Files(BaseModel):
    """The core's file report: page cache, journal, bios, CPUs."""

    model_config = _CONFIG
    ops: Count
    failed_ops: Count
    cache_hits: Count
    cache_misses: Count
    readahead_pages: Count
    metadata_read_pages: Count
    dirtied_pages: Count
    written_back_pages: Count
    dropped_dirty_pages: Count
    dirty_pages_at_end: Count
    evicted_pages: Count
    throttled_ns: Count
    commits: Count
    journal_blocks: Count
    checkpoint_blocks: Count
    data_bios: Count
    metadata_bios: Count
    mkfs_bytes: Count = 0
    nonda_writes: Count = 0
    partial_block_reads: Count = 0
    cpu: Cpu
    #: per core (runs written before 1 Dec 2026 have none)
    cpu_cores: list[CoreShare] = []


class Op(BaseModel):
    """One operation of a thread's program (repeated ``repeat`` times in a row), its clones summed."""

    model_config = _CONFIG
    op: str
    repeat: Count
    ops: Count
    errors: Count
    bytes: Count
    latency_ns: Count
    max_latency_ns: Count


class Thread(BaseModel):
    model_config = _CONFIG
    name: str
    instances: Count
    ops: list[Op]


class ThreadInterval(BaseModel):
    model_config = _CONFIG
    programs: Count
    programs_per_s: Number
    mean_program_ms: Number | None


class Interval(BaseModel):
    """One interval between samples (:mod:`ssdlab.fileseries`)."""

    model_config = _CONFIG
    start_s: Number
    end_s: Number
    cache_hit_ratio: Number | None
    threads: dict[str, ThreadInterval]


class Port(BaseModel):
    """A NIC port (or the bond's one link) over the run."""

    model_config = _CONFIG
    name: str
    capacity_bytes_per_s: Number
    bytes: Number
    utilisation: Number
    saturated_share: Number


class ClientClass(BaseModel):
    model_config = _CONFIG
    name: str
    count: Count
    line_bytes_per_s: Number
    window_cap_bytes_per_s: Number
    bytes: Number
    mean_bytes_per_s: Number
    min_bytes_per_s: Number
    max_bytes_per_s: Number


class Network(BaseModel):
    """The core's network report (server side)."""

    model_config = _CONFIG
    bytes_sent: Number
    bytes_per_s: Number
    calls: Count
    packets: Count
    cpu_ns: Count
    nic: list[Port]
    classes: list[ClientClass]


class ServerClass(BaseModel):
    model_config = _CONFIG
    name: str
    mean_bytes_per_s: Number
    allowed_bytes_per_s: Number
    limit: str
    met: Number


class Server(BaseModel):
    """What bounds the server (:mod:`ssdlab.serverreport`)."""

    model_config = _CONFIG
    bound: Literal["clients", "NIC", "CPU", "storage", "nothing saturated"]
    why: str
    demand_bytes_per_s: Number
    nic_full_share: Number
    cpu_busy: Number
    storage_util: Number
    classes: list[ServerClass]


class FileRun(BaseModel):
    """A file workload run's JSON."""

    model_config = _CONFIG
    name: str
    host: str
    targets: list[str]
    filesystems: list[str] = Field(default_factory=list)
    seed: Count
    run_s: Number
    files: Files
    threads: list[Thread]
    samples: list[Cpu] = Field(default_factory=list)
    intervals: list[Interval] = Field(default_factory=list)
    network: Network | None = None
    server: Server | None = None
    power_cut: PowerCutReport | None = None


def is_file_run(value: Any) -> bool:
    """Whether a JSON document has a file workload run's shape (fio's has ``jobs`` instead)."""
    return isinstance(value, dict) and "jobs" not in value and "threads" in value and "files" in value


def check(value: Any, path: str | Path) -> dict[str, Any]:
    """``value`` (read from ``path``) checked against :class:`FileRun`; returned as read."""
    try:
        FileRun.model_validate(value)
    except ValidationError as e:
        raise RunFileError(f"{path}: {describe(e)}") from None
    return value
