"""The core's output (``_core.run_json``'s JSON), as types: what a run returns, field by field.

These mirror the Rust types of ``ssdlab_core::report`` (``SimResult`` and what it holds). A
field the core always writes is required here; one it may leave out (``skip_serializing_if``)
is ``NotRequired``; one it writes as ``null`` is ``X | None``. ``tests/python/test_output_schema``
checks every one against the JSON Schema the core derives from its types
(``_core.result_schema()``): a field renamed or added on either side fails it. Python code
reads the result through these, with ``d["key"]``, never with a default for a field the core
always writes. :data:`RESULT` validates a result read back from a file (pydantic reads
TypedDicts, and refuses keys they do not name).
"""


from typing import Literal

from pydantic import ConfigDict, TypeAdapter
from typing_extensions import NotRequired, TypedDict

_STRICT = ConfigDict(extra="forbid")


class LatStats(TypedDict):
    __pydantic_config__ = _STRICT  # type: ignore[misc]
    n: int
    min: int
    max: int
    mean: float
    stddev: float


class DirStats(TypedDict):
    __pydantic_config__ = _STRICT  # type: ignore[misc]
    ios: int
    bytes: int
    slat: LatStats
    clat: LatStats
    lat: LatStats
    #: non-empty latency buckets as ``[value ns, count]``
    clat_hist: list[tuple[int, int]]
    slat_hist: list[tuple[int, int]]
    lat_hist: list[tuple[int, int]]


class OpSummary(TypedDict):
    """One operation of a job's file program (filebench's flowop)."""

    __pydantic_config__ = _STRICT  # type: ignore[misc]
    ops: int
    bytes: int
    errors: int
    latency_ns: int
    min_latency_ns: int
    max_latency_ns: int


class JobStats(TypedDict):
    __pydantic_config__ = _STRICT  # type: ignore[misc]
    name: str
    clone: int
    group_id: int
    read: DirStats
    write: DirStats
    trim: DirStats
    sync: DirStats
    start_ns: int
    measure_start_ns: int
    end_ns: int
    iodepth_level: list[int]
    issued: int
    completed: int
    bw_samples: list[LatStats]
    iops_samples: list[LatStats]
    cpu_ns: int
    sched_cpu_ns: int
    #: ``[time ns, direction, I/Os, bytes, offset, slat, clat, max slat, max clat, max lat]``
    log: NotRequired[list[list[int]]]
    file_ops: NotRequired[list[OpSummary]]
    #: a metadata engine's failed calls (the job stops at the first) and that one's errno
    errors: NotRequired[int]
    error: NotRequired[int]
    #: the file program's operation that found no file and so ended the thread
    no_file_op: NotRequired[int]


class DiskCounters(TypedDict):
    __pydantic_config__ = _STRICT  # type: ignore[misc]
    read_ios: int
    read_merges: int
    read_sectors: int
    read_ticks_ms: int
    write_ios: int
    write_merges: int
    write_sectors: int
    write_ticks_ms: int
    in_flight: int
    io_ticks_ms: int
    time_in_queue_ms: int
    discard_ios: int
    discard_merges: int
    discard_sectors: int
    discard_ticks_ms: int
    flush_ios: int
    flush_ticks_ms: int
    in_flight_area_ns: int


class ThermalReport(TypedDict):
    __pydantic_config__ = _STRICT  # type: ignore[misc]
    temperature_c: float
    max_temperature_c: float
    throttled: bool
    throttled_ns: int
    throttle_events: int


class NandReport(TypedDict):
    __pydantic_config__ = _STRICT  # type: ignore[misc]
    erase_count: int
    gc_runs: int
    gc_relocated_bytes: int
    rmw_reads: int
    buffer_read_hits: int
    unwritten_read_ius: int
    buffer_merges: int
    write_buffer_bytes_used: int
    write_buffer_unplaced_bytes: int
    free_blocks: int
    total_blocks: int
    max_block_erases: int
    over_provisioning: float
    map_bytes: int
    slc_used_bytes: int
    slc_budget_bytes: int
    slc_host_bytes: int
    folded_bytes: int
    mean_block_erases: float
    wear_level_moves: int
    gc_owed_ns: int


class HddReport(TypedDict):
    __pydantic_config__ = _STRICT  # type: ignore[misc]
    media_accesses: int
    seeks: int
    seek_cylinders: int
    seek_ns: int
    rotation_ns: int
    transfer_ns: int
    cache_read_hits: int
    read_ahead_hits: int
    cached_writes: int
    destaged_bytes: int
    dirty_bytes: int
    starved: int
    cylinders: int
    outer_zone_bytes_per_s: float
    inner_zone_bytes_per_s: float


class RebuildReport(TypedDict):
    __pydantic_config__ = _STRICT  # type: ignore[misc]
    member: str
    replaces: str
    started_ns: int
    finished_ns: int | None
    done_bytes: int
    target_bytes: int
    member_bytes: int
    unit_bytes: int
    overspeed_sleeps: int
    busy_waits: int
    head_wait_sleeps: int
    restarts: int
    rebuilt_with: list[str]


class ArrayReport(TypedDict):
    __pydantic_config__ = _STRICT  # type: ignore[misc]
    level: str
    engine: str
    chunk_bytes: int
    members: int
    stripe_heads: int
    rmw_stripe_heads: int
    rcw_stripe_heads: int
    full_stripe_heads: int
    parity_bytes: int
    reconstructed_bytes: int
    discard_dropped_bytes: int
    stripe_waits: int
    stripe_cache_hits: int
    joined_writes: int
    stripe_cache_grown: int
    bitmap_chunk_bytes: int
    bitmap_bits_set: int
    bitmap_updates: int
    bitmap_write_bytes: int
    bitmap_waits: int
    handler_busy_ns: int
    handler_threads: int
    failed: list[str]
    rebuild: NotRequired[RebuildReport]
    earlier_rebuilds: NotRequired[list[RebuildReport]]
    cache_read_hits: int
    cache_write_waits: int
    destaged_bytes: int
    cache_dirty_bytes: int
    controller_busy_ns: int
    verified_bytes: int
    data_errors: int
    first_data_error: NotRequired[str]


class RemapReport(TypedDict):
    __pydantic_config__ = _STRICT  # type: ignore[misc]
    buffer_bytes: int
    segment_bytes: int
    honor_flush: bool
    host_write_bytes: int
    host_read_bytes: int
    absorbed_bytes: int
    buffer_read_bytes: int
    drive_reads: int
    host_reads_from_drive: int
    log_writes: int
    log_write_bytes: int
    cleaned_bytes: int
    cleaned_segments: int
    write_waits: int
    flushes_ignored: int
    flushes_done: int
    buffered_bytes: int


class DeviceReport(TypedDict):
    __pydantic_config__ = _STRICT  # type: ignore[misc]
    kind: Literal["nand-ssd", "in-place", "hdd", "array", "remap"]
    host_bytes_written: int
    host_bytes_read: int
    media_bytes_written: int
    media_bytes_read: int
    die_busy_ns: int
    dies: int
    channel_busy_ns: list[int]
    controller_busy_ns: int
    controller_cores: int
    thermal: ThermalReport | None
    nand: NandReport | None
    array: NotRequired[ArrayReport]
    hdd: NotRequired[HddReport]
    remap: NotRequired[RemapReport]


class PowerCutDevice(TypedDict):
    __pydantic_config__ = _STRICT  # type: ignore[misc]
    name: str
    volatile_bytes: int
    promised_bytes: int
    broken_flushes: int
    members: "list[PowerCutDevice]"


class FsPowerCut(TypedDict):
    __pydantic_config__ = _STRICT  # type: ignore[misc]
    target: str
    located: bool
    data_files: int
    data_bytes: int
    promised_files: int
    promised_bytes: int
    freed_bytes: int
    metadata_blocks: int
    metadata_recovered: int
    inodes_damaged: int
    directories_damaged: int
    mappings_damaged: int
    bitmaps_damaged: int
    super_damaged: int
    journal_blocks: int
    transactions_broken: int
    transactions_not_replayed: int
    first_not_replayed: int | None
    not_replayed_blocks: int
    uncommitted_blocks: int
    dirty_files: int
    dirty_bytes: int
    fsck_needed: bool
    promised_examples: list[int]
    data_writeback: bool
    stale_files: int
    stale_bytes: int
    stale_examples: list[int]


class PowerCutReport(TypedDict):
    __pydantic_config__ = _STRICT  # type: ignore[misc]
    at_ns: int
    devices: list[PowerCutDevice]
    page_cache_dirty_bytes: int | None
    file_systems: NotRequired[list[FsPowerCut]]


class DeviceResult(TypedDict):
    __pydantic_config__ = _STRICT  # type: ignore[misc]
    name: str
    capacity_bytes: int
    scheduler: str
    disk: DiskCounters
    internal: DeviceReport
    members: "list[DeviceResult]"


class DeviceSample(TypedDict):
    __pydantic_config__ = _STRICT  # type: ignore[misc]
    disk: DiskCounters
    internal: DeviceReport
    members: NotRequired[list[DeviceResult]]


class CpuInterval(TypedDict):
    """The host's CPUs over an interval, as sar -u and /proc/loadavg give them."""

    __pydantic_config__ = _STRICT  # type: ignore[misc]
    start_ns: int
    end_ns: int
    busy: float
    iowait: float
    idle: float
    load: tuple[float, float, float]
    #: tasks active on average over the interval: what the load average settles to
    active: float


class CoreShare(TypedDict):
    """One core's shares of a run, as sar -P ALL averages them (they add up to 1)."""

    __pydantic_config__ = _STRICT  # type: ignore[misc]
    busy: float
    iowait: float
    idle: float


class FileCounters(TypedDict):
    """The file layer's running totals at a sample: page-cache lookups, and per job name
    (clones summed) per operation of its program, operations completed and latency summed."""

    __pydantic_config__ = _STRICT  # type: ignore[misc]
    cache_hits: int
    cache_misses: int
    ops: list[list[tuple[int, int]]]


class NetCounters(TypedDict):
    """What a server's network had sent by a sample: TCP payload per port of its NIC and
    per class of clients (in the order of the run's ``network`` report)."""

    __pydantic_config__ = _STRICT  # type: ignore[misc]
    nic_bytes: list[float]
    class_bytes: list[float]


class Sample(TypedDict):
    __pydantic_config__ = _STRICT  # type: ignore[misc]
    t_ns: int
    read_bytes: int
    write_bytes: int
    read_ios: int
    write_ios: int
    devices: list[DeviceSample]
    #: the host's CPUs since the previous sample (runs whose jobs work on files)
    cpu: CpuInterval | None
    #: the file layer's running totals (runs whose jobs work on files)
    files: FileCounters | None
    #: what the server's network had sent (runs with a network)
    network: NotRequired[NetCounters]


class FileReport(TypedDict):
    """What the file layer did (runs whose jobs work on files)."""

    __pydantic_config__ = _STRICT  # type: ignore[misc]
    ops: int
    failed_ops: int
    cache_hits: int
    cache_misses: int
    readahead_pages: int
    #: pages of directory and inode-table blocks lookups read (names not yet in memory)
    metadata_read_pages: int
    #: pages dirtied = written back + dropped dirty (deleted) + still dirty at the end
    dirtied_pages: int
    written_back_pages: int
    dropped_dirty_pages: int
    dirty_pages_at_end: int
    evicted_pages: int
    throttled_ns: int
    commits: int
    journal_blocks: int
    checkpoint_blocks: int
    data_bios: int
    metadata_bios: int
    mkfs_bytes: int
    #: buffered ext4 writes that allocated at once, free space short (ext4_nonda_switch)
    nonda_writes: int
    #: blocks read before a buffered write covering them in part (block_write_begin)
    partial_block_reads: int
    cpu: CpuInterval
    #: per core, its shares of the run
    cpu_cores: list[CoreShare]
    #: per file system, the free-extent histogram: [bucket start bytes, extents, blocks]
    free_extents: list[list[tuple[int, int, int]]]
    #: per file system, its regular files by extents as filefrag counts them: [extents, files]
    extents_per_file: list[list[tuple[int, int]]]


class NetResource(TypedDict):
    __pydantic_config__ = _STRICT  # type: ignore[misc]
    name: str
    capacity_bytes_per_s: float
    bytes: float
    utilisation: float
    saturated_share: float


class ClientClassReport(TypedDict):
    __pydantic_config__ = _STRICT  # type: ignore[misc]
    name: str
    count: int
    line_bytes_per_s: float
    window_cap_bytes_per_s: float
    bytes: float
    mean_bytes_per_s: float
    min_bytes_per_s: float
    max_bytes_per_s: float
    lines_saturated_share: float


class NetworkReport(TypedDict):
    __pydantic_config__ = _STRICT  # type: ignore[misc]
    elapsed_ns: int
    bytes_sent: float
    bytes_per_s: float
    calls: int
    #: flows started: one a call, or with a send buffer one a stretch of calls on a connection
    flows: int
    packets: int
    cpu_ns: int
    nic: list[NetResource]
    classes: list[ClientClassReport]


class SimResult(TypedDict):
    __pydantic_config__ = _STRICT  # type: ignore[misc]
    seed: int
    start_ns: int
    end_ns: int
    drained_ns: int
    events: int
    jobs: list[JobStats]
    devices: list[DeviceResult]
    samples: list[Sample]
    files: NotRequired[FileReport]
    power_cut: NotRequired[PowerCutReport]
    network: NotRequired[NetworkReport]


#: Each type by the name the core's schema gives it.
TYPES: dict[str, type] = {t.__name__: t for t in (
    LatStats, OpSummary, DirStats, JobStats, DiskCounters, CpuInterval, CoreShare, FileCounters, FileReport, ThermalReport, NandReport, HddReport, RebuildReport,
    ArrayReport, RemapReport, DeviceReport, PowerCutDevice, FsPowerCut, PowerCutReport, DeviceResult, DeviceSample, Sample,
    NetCounters, NetResource, ClientClassReport, NetworkReport, SimResult)}

#: Validates a whole result (a file read back, a result from another process).
RESULT: TypeAdapter[SimResult] = TypeAdapter(SimResult)
