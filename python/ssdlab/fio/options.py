"""The option table: what each fio option means to ssdlab, and how its value is read.

Every option line ends up in one of three bins:

* **modelled** — parsed into :class:`JobState` and used to build the ``JobSpec``;
* **accepted** — a valid fio option that does not change what the simulated device sees
  (logging, CPU affinity...): one warning per option per file saying it is accepted but not
  modelled. ``ioengine`` and ``direct`` are modelled: a synchronous engine caps iodepth at 1,
  and direct I/O is what is simulated (buffered I/O warns that it is simulated as direct);
* **ignored** — a valid fio option that *would* change the result but is not simulated
  (``zonemode``, ``flow``, ``latency_target``...): one warning per option
  per file saying the result ignores it. Some options only land here in some jobs
  (``verify`` with a write phase, ``nrfiles`` above 1, a non-block ioengine); those are
  judged per job in :mod:`ssdlab.fio.resolve`.

A name that is in none of these and not in ``fio_option_names.txt`` is an error.
"""

from __future__ import annotations

import copy
import difflib
import math
import re
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Callable

from ..units import (
    FioSize,
    Percent,
    INT_HINT,
    SIZE_HINT,
    TIME_HINT,
    ValueProblem,
    Zones,
    evaluate,
    fio_time_as_read,
    parse_fio_bytes,
    parse_fio_count,
    parse_fio_size,
    parse_fio_time_us,
)
from .errors import FioJobError
from .grammar import RawOption

DIRECTIONS = ("read", "write", "trim")
RW_MODES = {
    "read": "read", "write": "write", "trim": "trim",
    "randread": "randread", "randwrite": "randwrite", "randtrim": "randtrim",
    "rw": "rw", "readwrite": "rw", "randrw": "randrw",
    "trimwrite": "trimwrite", "randtrimwrite": "randtrimwrite",
}
RANDOM_MODES = {"randread", "randwrite", "randtrim", "randrw", "randtrimwrite"}
DEFAULT_PERCENTILES = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9,
    99.95, 99.99,
]
MAX_PERCENTILES = 20  # FIO_IO_U_LIST_MAX_LEN
DEFAULT_ZIPF_THETA = 1.1  # FIO_DEF_ZIPF
DEFAULT_PARETO_H = 0.2  # FIO_DEF_PARETO


@dataclass(frozen=True)
class Where:
    """Where an option was set, for warnings raised once the whole job is known."""

    path: str
    line: int | None
    text: str

    def prefix(self) -> str:
        return f"{self.path}:{self.line}" if self.line is not None else self.path


@dataclass
class DistSpec:
    kind: str = "random"  # random, zipf, pareto, normal, zoned, zoned_abs, sequence
    param: float = 0.0
    center: float | None = None
    # zoned: per direction, a list of (access %, size % or absolute bytes); None = unset
    zones: list[list[tuple[float, float]] | None] = field(default_factory=lambda: [None] * 3)


@dataclass
class JobState:
    """Parsed options of one section, inherited from the globals above it."""

    kb_base: int = 1024
    rw: str = "read"
    rw_modifier: int = 0
    rwmix_read: float = 50.0
    bs: list[int] = field(default_factory=lambda: [4096] * 3)
    bsrange: list[tuple[int, int] | None] = field(default_factory=lambda: [None] * 3)
    bssplit: list[list[tuple[int, float]] | None] = field(default_factory=lambda: [None] * 3)
    ba: list[int | None] = field(default_factory=lambda: [None] * 3)
    iodepth: int = 1
    iodepth_batch: int = 1  # iodepth_batch_submit; 0: iodepth
    numjobs: int = 1
    size: FioSize | None = None
    io_size: FioSize | None = None
    filesize: tuple[int, int] | None = None
    offset: FioSize = 0
    offset_increment: FioSize = 0
    number_ios: int = 0
    loops: int = 1
    runtime_us: float = 0.0
    time_based: bool = False
    ramp_time_us: float = 0.0
    startdelay_us: list[float] = field(default_factory=lambda: [0.0, 0.0])
    thinktime_us: float = 0.0
    thinktime_blocks: int = 1
    rate: list[int] = field(default_factory=lambda: [0, 0, 0])
    rate_iops: list[int] = field(default_factory=lambda: [0, 0, 0])
    rate_process: str = "linear"
    fsync: int = 0
    fdatasync: int = 0
    norandommap: bool = False
    dist: DistSpec = field(default_factory=DistSpec)
    randrepeat: bool = True
    randseed: int | None = None
    group_reporting: bool = False
    new_group: bool = False
    stonewall: bool = False
    wait_for: str | None = None
    filename: str | None = None
    name: str | None = None
    percentile_list: list[float] | None = None
    percentile_precision: int = 2  # decimals of the labels fio prints
    ioengine: str = "psync"
    direct: bool = False  # fio's default: buffered I/O through the page cache
    zonesize: int = 0
    fill_device: bool = False
    verify: str = "0"
    do_verify: bool = True
    verify_backlog: int = 0
    nrfiles: int = 1
    read_iolog: str | None = None
    replay_no_stall: bool = False
    replay_time_scale: int = 100
    replay_redirect: str | None = None
    ioscheduler: str | None = None
    # options that shape fio's report and log files (canonical name -> value as written;
    # "" for a bare switch), inherited like the others; read by ``report_options``
    report: dict[str, str] = field(default_factory=dict)
    # where modelled options were set: canonical name -> Where
    where: dict[str, Where] = field(default_factory=dict)
    # options written in this section (canonical name -> value), for fio's "job options"
    written: dict[str, str] = field(default_factory=dict)

    def child(self) -> "JobState":
        """A copy for a job section: inherits values, not the list of written options."""
        new = copy.deepcopy(self)
        new.written = {}
        return new

    @property
    def is_random(self) -> bool:
        return self.rw in RANDOM_MODES


# --------------------------------------------------------------------------- names


@lru_cache(maxsize=1)
def fio_option_names() -> dict[str, str]:
    """Every valid fio option name mapped to its canonical name (aliases to their option)."""
    text = (resources.files("ssdlab.fio") / "fio_option_names.txt").read_text(encoding="utf-8")
    names: dict[str, str] = {}
    for raw in text.splitlines():
        body, _, comment = raw.partition("#")
        name = body.strip()
        if not name:
            continue
        target = comment.strip()
        names[name] = target[len("alias of "):].strip() if target.startswith("alias of ") else name
    for canonical, aliases in ALIASES.items():
        names.setdefault(canonical, canonical)
        for alias in aliases:
            names[alias] = canonical
    return names


NOT_IN_FIO_333 = "# --- not in fio-3.33"


@lru_cache(maxsize=1)
def fio_333_lacks() -> frozenset[str]:
    """The valid option names that fio 3.33 refuses as "Bad option": options of a newer fio
    (``thinkcycles``, ``ramp_size``) or of ioengines Debian's fio 3.33 is built without, listed
    after the ``# --- not in fio-3.33`` line of ``fio_option_names.txt``. Like every valid name
    they are read or said not modelled; a job file that sets one also hears that fio 3.33
    would not run it."""
    text = (resources.files("ssdlab.fio") / "fio_option_names.txt").read_text(encoding="utf-8")
    tail = text[text.index(NOT_IN_FIO_333):]
    return frozenset(line.partition("#")[0].strip() for line in tail.splitlines()) - {""}


# Aliases of the options ssdlab reads (fio 3.42 spellings included).
ALIASES: dict[str, tuple[str, ...]] = {
    "rw": ("readwrite",),
    "bs": ("blocksize",),
    "ba": ("blockalign",),
    "bsrange": ("blocksize_range",),
    "io_size": ("io_limit",),
    "offset": ("fileoffset",),
    "runtime": ("timeout",),
    "stonewall": ("wait_for_previous",),
    "randrepeat": ("allrandrepeat",),
    "fill_device": ("fill_fs",),
    "nrfiles": ("nr_files",),
    "steadystate": ("ss",),
    "steadystate_duration": ("ss_dur",),
    "steadystate_ramp_time": ("ss_ramp",),
    "steadystate_check_interval": ("ss_interval",),
    "rate_min": ("ratemin",),
    "rate_cycle": ("ratecycle",),
    "iodepth_batch": ("iodepth_batch_submit",),
    "iodepth_batch_complete_min": ("iodepth_batch_complete",),
    "plids": ("fdp_pli",),
    "plid_select": ("fdp_pli_select",),
    "dataplacement": ("data_placement",),
    "mem": ("iomem",),
    "iomem_align": ("mem_align",),
    "log_window_value": ("log_max_value",),
    "log_alternate_epoch": ("log_unix_epoch",),
    "disable_bw_measurement": ("disable_bw",),
}

# Valid fio options that would change the simulated result but are not simulated.
IGNORED = frozenset("""
zonemode zonesize zonerange zoneskip zonecapacity max_open_zones job_max_open_zones
zone_reset_threshold zone_reset_frequency read_beyond_wp ignore_zone_limits
write_zone_remainder recover_zbd_write_error
flow flow_id flow_sleep flow_watermark
rate_min rate_iops_min rate_cycle rate_ignore_thinktime
latency_target latency_window latency_percentile latency_run max_latency
exitall exit_what exitall_on_error
iodepth_batch_complete_min iodepth_batch_complete_max iodepth_low
serialize_overlap
sync write_barrier sync_file_range end_fsync fsync_on_close end_syncfs
rw_sequencer percentage_random percentage_sequential file_service_type openfiles
file_append offset_align bs_unaligned bs_is_seq_rand
thinktime_spin thinktime_blocks_type thinktime_iotime thinkcycles
verify_only pre_read replay_scale replay_align
replay_skip read_iolog_chunked merge_blktrace_file
merge_blktrace_scalars merge_blktrace_iters opendir
prio prioclass priohint cmdprio cmdprio_class cmdprio_percentage cmdprio_bssplit cmdprio_hint
write_hint fdp plids plid_select dataplacement dp_scheme num_range write_mode
readfua writefua
sprandom spr_op spr_num_regions spr_cs random_sequence_stride ramp_size
trim_percentage trim_backlog trim_backlog_batch
""".split())

# Options the file layer answers: a job that sets one asks for files and runs on them unless
# it names a block device (:func:`~ssdlab.fio.resolve.runs_on_files`); said to be unmodelled
# only for those that do, by the resolver, which knows where each job's I/O goes (a buffered
# job on a device's own page cache honours end_fsync and fadvise_hint of them).
FILE_LAYER = frozenset("end_fsync unlink file_service_type openfiles create_on_open fallocate stat_type directory".split())
# Modelled on files only, but no reason by itself to run on files: fio's posix_fadvise of each
# file (it sets the files' read-ahead; a raw job's I/O is simulated as direct).
FILE_HINTS = frozenset({"fadvise_hint"})

# Options that shape fio's report or its log files rather than the I/O: kept per job for
# the report (see ``report_options``).
REPORT_OPTIONS = frozenset("""
bwavgtime iopsavgtime log_avg_msec write_bw_log write_iops_log write_lat_log log_offset
per_job_logs log_window_value thread description latency_target latency_window
latency_percentile ioengine iodepth_batch_complete_min continue_on_error
steadystate steadystate_duration steadystate_ramp_time steadystate_check_interval
clat_percentiles lat_percentiles slat_percentiles disable_lat disable_clat disable_slat
disable_bw_measurement gtod_reduce unified_rw_reporting
""".split())
# Of those, the ones ssdlab's report honours in full (no "not modelled" warning). fio 3.33
# still prints its bandwidth and IOPS samples under disable_bw_measurement: so does ssdlab.
REPORTED = frozenset("""
bwavgtime iopsavgtime log_avg_msec write_bw_log write_iops_log write_lat_log log_offset
per_job_logs log_window_value thread
steadystate steadystate_duration steadystate_ramp_time steadystate_check_interval
clat_percentiles lat_percentiles slat_percentiles disable_lat disable_clat disable_slat
disable_bw_measurement gtod_reduce unified_rw_reporting
""".split())

# Options read by ssdlab that need no warning even though they are not in JobSpec.
SILENT = frozenset({"name", "description", "kb_base", "unit_base"})

# Priorities of fio's option sort inside a section: kb_base first, filename last.
_PRIORITY = {"kb_base": 1, "unit_base": 1, "filename": -1, "filename_format": -1}


def canonical(key: str) -> str | None:
    return fio_option_names().get(key)


def section_order(options: list[RawOption]) -> list[RawOption]:
    """fio parses a section's options sorted by priority (stable here)."""
    return sorted(options, key=lambda o: -_PRIORITY.get(canonical(o.key) or o.key, 0))


# --------------------------------------------------------------------------- applying


class Applier:
    """Applies option lines to a :class:`JobState`, collecting warnings."""

    def __init__(self, warn: Callable[[str, str, str], None]) -> None:
        # warn(dedupe_key, path, message-with-location)
        self._warn = warn

    def warn_unmodelled(self, name: str, where: Where) -> None:
        """Option ``name``, written at ``where``, is valid but not modelled: said once per file."""
        kind = ("changes what fio does but is not modelled; the simulated result ignores it"
                if name in IGNORED else "is accepted but not modelled")
        self._warn(f"{where.path}:{name}", where.path, f"{where.prefix()}: option '{where.text}' {kind}")

    def apply(self, st: JobState, opt: RawOption, *, overriding: bool = False) -> None:
        name = canonical(opt.key)
        if name is None:
            guess = difflib.get_close_matches(opt.key, list(fio_option_names()), n=1)
            hint = f" (did you mean '{guess[0]}'?)" if guess else ""
            raise FioJobError(f"unknown option '{opt.key}'{hint}", path=opt.path, line=opt.line,
                              option=opt.key, name_option=False)
        if opt.value is not None:
            st.written[name] = _as_fio_dumps(opt)
        where = Where(opt.path, opt.line, opt.text)
        if opt.key in fio_333_lacks():
            self._warn(
                f"{opt.path}:{opt.key}:not-in-3.33", opt.path,
                f"{where.prefix()}: option '{opt.key}' is not in fio 3.33, which refuses it (\"Bad option\"):"
                " it belongs to a newer fio or to an ioengine Debian's fio 3.33 lacks",
            )
        if opt.spaced:
            self._warn(
                f"{opt.path}:spaced", opt.path,
                f"{where.prefix()}: blanks around '=' in '{opt.text}': fio keeps them in the"
                " value and reads e.g. 'size = 4k' as 4 bytes; ssdlab strips them",
            )
        if name in REPORT_OPTIONS:
            if name in REPORTED:
                self._check(opt, name, overriding)
            st.report[name] = opt.value if opt.value is not None else ""
            if name in REPORTED:
                st.where[name] = where
                return
        handler = _HANDLERS.get(name)
        if handler is None:
            self._check(opt, name, overriding)
            st.where[name] = where
            if name in FILE_LAYER or name in FILE_HINTS:
                return  # judged by the resolver, which knows whether the job runs on files
            self.warn_unmodelled(name, where)
            return
        notes: list[str] = []
        try:
            handler(st, _Value(opt, name, notes, overriding))
        except ValueProblem as exc:
            message = str(exc)
            if opt.empty_vars:
                names = ", ".join("${" + v + "}" for v in opt.empty_vars)
                message += f" ({names} is unset or empty)"
            raise FioJobError(message, path=opt.path, line=opt.line, option=opt.key) from None
        st.where[name] = where
        for note in notes:
            self._warn(f"{opt.path}:{name}:{note}", opt.path, f"{where.prefix()}: option '{opt.key}': {note}")


    def _check(self, opt: RawOption, name: str, overriding: bool) -> None:
        """Refuse what fio refuses of an option's value (its range, its words, 0 or 1), and
        say how fio reads a value where it is not what the text says."""
        check = _RANGE_CHECKS.get(name)
        if check is None:
            return
        notes: list[str] = []
        try:
            check(_Value(opt, name, notes, overriding))
        except ValueProblem as exc:
            raise FioJobError(str(exc), path=opt.path, line=opt.line, option=opt.key) from None
        where = Where(opt.path, opt.line, opt.text)
        for note in notes:
            self._warn(f"{opt.path}:{name}:{note}", opt.path, f"{where.prefix()}: option '{opt.key}': {note}")


def _as_fio_dumps(opt: RawOption) -> str:
    """The value fio lists under "job options": after ${VAR}, keywords and their bc math."""
    if opt.keyword_math and opt.value:
        try:
            return str(int(evaluate(opt.value, integer=True)))
        except ValueProblem:
            pass
    return opt.value or ""


@dataclass
class _Value:
    """An option line being applied, with helpers to read its value."""

    opt: RawOption
    name: str
    notes: list[str]
    overriding: bool

    def text(self) -> str:
        if self.opt.value is None:
            raise ValueProblem("needs a value")
        value = self.opt.value
        if not value:
            raise ValueProblem(f"expected {_EXPECTED.get(self.name, 'a value')}, got an empty value")
        return value

    def numeric(self) -> str:
        value = self.text()
        if self.opt.keyword_math:
            value = str(int(evaluate(value, integer=True)))
        return value

    def flag(self, boolean: bool = False) -> bool:
        """A ``key`` / ``key=N`` switch: bare means on, a number means on unless 0. A
        ``boolean`` is fio's FIO_OPT_BOOL, which fio's option_init bounds to 0 and 1 (parse.c:
        ``direct=2`` is "max value out of range")."""
        if self.opt.value is None:
            return True
        value = self.numeric().strip()
        try:
            n = int(value, 16 if value.lower().startswith("0x") else 10)
        except ValueError:
            raise ValueProblem(f"expected 0 or 1, got '{value}'") from None
        if boolean and n not in (0, 1):
            raise ValueProblem(f"expected 0 or 1, got '{value}'")
        return n != 0

    def single(self) -> str:
        value = self.numeric()
        if "," in value or (":" in value and not value.startswith("(")):
            raise ValueProblem(f"expected a single value, got '{value}'")
        return value


# --------------------------------------------------------------------------- handlers

_EXPECTED = {
    **{n: "a size like 4k" for n in ("bs", "ba", "bsrange", "bssplit", "size", "io_size",
                                      "filesize", "offset", "offset_increment", "rate",
                                      "zonesize")},
    **{n: "a whole number" for n in ("iodepth", "iodepth_batch", "numjobs", "number_ios", "loops", "rate_iops",
                                      "thinktime_blocks", "fsync", "fdatasync", "rwmixread",
                                      "rwmixwrite", "randseed", "nrfiles", "verify_backlog")},
    **{n: "a time like 10s" for n in ("runtime", "ramp_time", "startdelay", "thinktime")},
    # not modelled, but checked as fio checks them (_FIO_NUMBERS)
    **{n: "a time like 10s" for n in ("max_latency", "thinktime_spin", "thinktime_iotime")},
    **{n: "a size like 4k" for n in ("rate_min", "zoneskip")},
    **{n: "a whole number" for n in ("rate_iops_min", "rate_cycle", "flow_sleep", "replay_scale", "log_hist_msec",
                                      "iomem_align")},
    **{n: "0 or 1" for n in ("exitall", "exitall_on_error", "bs_unaligned", "verify_only", "zero_buffers",
                              "refill_buffers", "softrandommap", "bs_is_seq_rand")},
    "replay_align": "a power of 2",
    # read by the report
    **{n: "a whole number" for n in ("bwavgtime", "iopsavgtime", "log_avg_msec")},
    **{n: "a time like 10s" for n in ("steadystate_duration", "steadystate_ramp_time", "latency_target",
                                       "latency_window")},
    "description": "a text",
    **{n: "a number" for n in ("zone_reset_threshold", "zone_reset_frequency", "merge_blktrace_scalars",
                                "merge_blktrace_iters")},
}


def _h_rw(st: JobState, v: _Value) -> None:
    text = v.text()
    mode, sep, modifier = text.partition(":")
    mode = mode.strip()
    if mode not in RW_MODES:
        raise ValueProblem(
            "expected one of read, write, trim, randread, randwrite, randtrim, rw, randrw,"
            f" trimwrite, randtrimwrite, got '{text}'"
        )
    st.rw = RW_MODES[mode]
    st.rw_modifier = 0
    if not sep:
        return
    if st.is_random:
        n = parse_fio_count(modifier, st.kb_base)
        if n <= 0 or n > 2**32 - 1:
            raise ValueProblem(f"the ':N' of a random mode must be 1 or more, got '{text}'")
    else:
        n = parse_fio_bytes(modifier, st.kb_base, negative=True, notes=v.notes)
    st.rw_modifier = n


def _h_rwmix(read: bool) -> Callable[[JobState, _Value], None]:
    def handler(st: JobState, v: _Value) -> None:
        n = parse_fio_count(v.single(), st.kb_base)
        if not 0 <= n <= 100:
            raise ValueProblem(f"must be between 0 and 100, got {n}")
        st.rwmix_read = float(n if read else 100 - n)
    return handler


def _positive_bytes(st: JobState, v: _Value, raw: str) -> int:
    n = parse_fio_bytes(raw, st.kb_base, notes=v.notes)
    if n <= 0:
        raise ValueProblem(f"must be positive, got '{raw}'")
    return n


def _h_bs(st: JobState, v: _Value) -> None:
    st.bs = merge_directions(st.bs, split_directions(v.numeric()), lambda raw, _: _positive_bytes(st, v, raw))


def _h_ba(st: JobState, v: _Value) -> None:
    st.ba = merge_directions(st.ba, split_directions(v.numeric()), lambda raw, _: _positive_bytes(st, v, raw))


def _h_bsrange(st: JobState, v: _Value) -> None:
    def one(raw: str, _: bool) -> tuple[int, int]:
        cut = raw.find("-")
        if cut <= 0:
            cut = raw.find(":")
        if cut <= 0:
            raise ValueProblem(f"expected a range like 4k-64k, got '{raw}'")
        lo = _positive_bytes(st, v, raw[:cut])
        hi = _positive_bytes(st, v, raw[cut + 1:])
        return (min(lo, hi), max(lo, hi))

    st.bsrange = merge_directions(st.bsrange, split_directions(v.numeric(), range_separators=False), one)


def _split_parse(text: str) -> list[str | None]:
    """fio's read,write,trim split for bssplit/zoned: ``a,b`` gives trim the write list."""
    parts = text.split(",")
    if len(parts) == 1:
        return [text, text, text]
    if len(parts) == 2:
        return [parts[0], parts[1], parts[1]]
    if len(parts) == 3:
        return parts  # type: ignore[return-value]
    raise ValueProblem(f"expected at most three lists (read,write,trim), got '{text}'")


def _percent(raw: str, what: str) -> int | None:
    """A share in a split list; blank or 0 means 'share the rest' (as in fio)."""
    s = raw.strip().rstrip("%")
    if not s:
        return None
    if not s.isdigit():
        raise ValueProblem(f"expected a whole percentage in {what}, got '{raw}'")
    n = int(s)
    if n > 100:
        raise ValueProblem(f"percentage above 100 in {what}: '{raw}'")
    return n or None


def _fill_shares(shares: list[int | None], what: str) -> list[float]:
    given = sum(s for s in shares if s is not None)
    missing = shares.count(None)
    if given > 100:
        raise ValueProblem(f"{what} percentages add up to {given}%, more than 100%")
    rest = (100.0 - given) / missing if missing else 0.0
    return [float(s) if s is not None else rest for s in shares]


def _h_bssplit(st: JobState, v: _Value) -> None:
    text = v.text()
    lists = _split_parse(text)
    result = list(st.bssplit)
    for d, part in enumerate(lists):
        entries = []
        for item in (part or "").split(":"):
            if not item.strip():
                break
            size_raw, _, share_raw = item.partition("/")
            entries.append((_positive_bytes(st, v, size_raw), _percent(share_raw, "bssplit")))
        if not entries:
            continue
        shares = _fill_shares([s for _, s in entries], "bssplit")
        total = sum(shares)
        if total < 100.0 - 1e-9:
            # fio sorts by share and lets the most frequent size take what is left over.
            top = max(range(len(shares)), key=lambda i: (shares[i], i))
            v.notes.append(
                f"{DIRECTIONS[d]} shares add up to {total:g}%; like fio, the remaining"
                f" {100 - total:g}% go to the most frequent size ({entries[top][0]} bytes)"
            )
            shares[top] += 100.0 - total
        pairs = zip(entries, shares, strict=True)
        result[d] = [(size, share) for (size, _), share in pairs if share > 0]
    st.bssplit = result


_COUNT_FRACTION = re.compile(r"^\s*\+?(\d+)\.\d*[A-Za-z]*\s*$")


def _h_count(
    attr: str, minimum: int = 0, zero_means: int | None = None, maximum: int | None = None
) -> Callable[[JobState, _Value], None]:
    def handler(st: JobState, v: _Value) -> None:
        text = v.single()
        fraction = _COUNT_FRACTION.match(text)
        if fraction:
            # fio's str_to_decimal stops at the '.', and get_mult_bytes finds no unit there
            # (iodepth=1.5 is 1, 2.5k is 2: fio 3.33's --parse-only --debug=parse)
            n = int(fraction.group(1))
            if n < minimum:
                raise ValueProblem(f"must be at least {minimum}, got '{text}' (fio reads it as {n})")
            meaning = f", and 0 means {zero_means}" if zero_means is not None and n == 0 else ""
            v.notes.append(f"fio reads '{text}' as {n} (it stops at the '.'){meaning}; ssdlab does the same")
        else:
            n = parse_fio_count(text, st.kb_base)
        if zero_means is not None and n == 0:
            n = zero_means
        if n < minimum:
            raise ValueProblem(f"must be at least {minimum}, got {n}")
        if maximum is not None and n > maximum:
            raise ValueProblem(f"must be at most {maximum:,}, got {n}")
        setattr(st, attr, n)
    return handler


def _h_size(attr: str, *, zero_unsets: bool = False) -> Callable[[JobState, _Value], None]:
    def handler(st: JobState, v: _Value) -> None:
        value = parse_fio_size(v.single(), st.kb_base, percent=True, zones=True, notes=v.notes)
        if value == 0 and zero_unsets:
            setattr(st, attr, None)
            return
        if attr == "size" and (value == 0 or value == Percent(0) or value == Zones(0)):
            raise ValueProblem("size must be positive (leave it out to use the whole device)")
        setattr(st, attr, value)
    return handler


def _h_offset(attr: str) -> Callable[[JobState, _Value], None]:
    def handler(st: JobState, v: _Value) -> None:
        setattr(st, attr, parse_fio_size(v.single(), st.kb_base, percent=True, zones=True, notes=v.notes))
    return handler


def _h_filesize(st: JobState, v: _Value) -> None:
    parts = split_directions(v.numeric())
    if len(parts) > 2:
        raise ValueProblem(f"expected a size or a range like 1m-4m, got '{v.text()}'")
    lo_hi = merge_directions([None, None, None], parts, lambda raw, _: _positive_bytes(st, v, raw))
    lo, hi = lo_hi[0], lo_hi[1]
    if lo is None or hi is None:
        raise ValueProblem(f"expected a size, got '{v.text()}'")
    st.filesize = (min(lo, hi), max(lo, hi))


def _time(attr: str, *, seconds: bool) -> Callable[[JobState, _Value], None]:
    def handler(st: JobState, v: _Value) -> None:
        us = parse_fio_time_us(v.single(), seconds_default=seconds, notes=v.notes, warn_fraction=not v.overriding)
        setattr(st, attr, us)
    return handler


def _h_startdelay(st: JobState, v: _Value) -> None:
    parts = split_directions(v.numeric())
    if len(parts) > 2:
        raise ValueProblem(f"expected a time or a range like 1-5, got '{v.text()}'")
    values = merge_directions(
        [None, None, None], parts,
        lambda raw, sep: parse_fio_time_us(
            raw, seconds_default=True, before_range_separator=sep, notes=v.notes,
            warn_fraction=not v.overriding,
        ),
    )
    lo, hi = values[0], values[1]
    if lo is None or hi is None:
        raise ValueProblem(f"expected a time, got '{v.text()}'")
    st.startdelay_us = [min(lo, hi), max(lo, hi)]


def _h_rate(attr: str, counts: bool) -> Callable[[JobState, _Value], None]:
    def handler(st: JobState, v: _Value) -> None:
        def one(raw: str, _: bool) -> int:
            if counts:
                return parse_fio_count(raw, st.kb_base)
            return parse_fio_bytes(raw, st.kb_base, notes=v.notes)
        setattr(st, attr, merge_directions(getattr(st, attr), split_directions(v.numeric()), one))
    return handler


def _h_choice(attr: str, choices: tuple[str, ...]) -> Callable[[JobState, _Value], None]:
    def handler(st: JobState, v: _Value) -> None:
        text = v.text().strip()
        if text not in choices:
            raise ValueProblem(f"expected {' or '.join(choices)}, got '{text}'")
        setattr(st, attr, text)
    return handler


def _h_flag(attr: str, boolean: bool = False) -> Callable[[JobState, _Value], None]:
    """fio's FIO_OPT_STR_SET switches take any number; its FIO_OPT_BOOL ones (``boolean``) 0
    or 1."""
    def handler(st: JobState, v: _Value) -> None:
        setattr(st, attr, v.flag(boolean))
    return handler


def _h_string(attr: str) -> Callable[[JobState, _Value], None]:
    def handler(st: JobState, v: _Value) -> None:
        setattr(st, attr, v.text())
    return handler


def _h_kb_base(st: JobState, v: _Value) -> None:
    text = v.text().strip()
    if text not in ("1024", "1000"):
        raise ValueProblem(f"expected 1024 or 1000, got '{text}'")
    st.kb_base = int(text)


def _h_unit_base(st: JobState, v: _Value) -> None:
    text = v.text().strip()
    if text not in ("0", "1", "8"):
        raise ValueProblem(f"expected 0, 1 or 8, got '{text}'")


def _float(raw: str, what: str) -> float:
    s = raw.strip()
    try:
        value = evaluate(s) if s.startswith("(") else float(s)
    except (ValueError, ValueProblem):
        raise ValueProblem(f"expected a number for {what}, got '{raw}'") from None
    if not math.isfinite(value):
        raise ValueProblem(f"expected a number for {what}, got '{raw}'")
    return value


def _h_random_distribution(st: JobState, v: _Value) -> None:
    text = v.text().strip()
    kind, _, params = text.partition(":")
    kinds = ("random", "zipf", "pareto", "normal", "zoned", "zoned_abs", "sequence")
    if kind not in kinds:
        raise ValueProblem(f"expected one of {', '.join(kinds[:-1])}, got '{text}'")
    dist = DistSpec(kind=kind)
    if kind in ("zipf", "pareto", "normal"):
        dist.param = {"zipf": DEFAULT_ZIPF_THETA, "pareto": DEFAULT_PARETO_H, "normal": 0.0}[kind]
        if params.strip():
            value, _, center = params.partition(":")
            dist.param = _float(value, kind)
            if center.strip():
                dist.center = _float(center, "the center")
                if not 0.0 <= dist.center <= 1.0:
                    raise ValueProblem(f"center must be between 0 and 1, got '{center}'")
        if kind == "zipf" and (dist.param <= 0 or dist.param == 1.0):
            raise ValueProblem(f"zipf theta must be positive and not 1, got {dist.param:g}")
        if kind == "pareto" and not 0.0 < dist.param < 1.0:
            raise ValueProblem(f"pareto h must be between 0 and 1, got {dist.param:g}")
        if kind == "normal" and not 0.0 <= dist.param < 100.0:
            raise ValueProblem(f"normal deviation must be in [0, 100), got {dist.param:g}")
    elif kind in ("zoned", "zoned_abs"):
        dist.zones = _parse_zones(st, v, params, absolute=kind == "zoned_abs")
    st.dist = dist


def _parse_zones(st: JobState, v: _Value, text: str, *, absolute: bool) -> list:
    if not text.strip():
        raise ValueProblem("expected zones like zoned:60/10:30/20:10/70")
    result: list = [None, None, None]
    for d, part in enumerate(_split_parse(text)):
        access: list[int] = []
        sizes: list[int | None] = []
        for item in (part or "").split(":"):
            if not item.strip():
                break
            acc_raw, _, size_raw = item.partition("/")
            acc = parse_fio_count(acc_raw, st.kb_base)
            if acc > 100:
                raise ValueProblem(f"zone access percentage above 100: '{item}'")
            access.append(acc)
            if absolute:
                sizes.append(parse_fio_bytes(size_raw, st.kb_base, notes=v.notes) if size_raw.strip() else 0)
            else:
                sizes.append(_percent(size_raw, "zoned"))
        if not access:
            continue
        if sum(access) != 100:
            raise ValueProblem(f"zone access percentages add up to {sum(access)}%, not 100%")
        shares = [float(s) for s in sizes] if absolute else _fill_shares(sizes, "zone size")
        result[d] = list(zip([float(a) for a in access], shares, strict=True))
    return result


def _h_percentile_list(st: JobState, v: _Value) -> None:
    items = [p for p in v.text().split(":")]
    if len(items) > MAX_PERCENTILES:
        raise ValueProblem(f"at most {MAX_PERCENTILES} percentiles, got {len(items)}")
    values = [_float(p, "a percentile") for p in items]
    for p in values:
        if not 0.0 <= p <= 100.0:
            raise ValueProblem(f"percentiles must be between 0 and 100, got {p:g}")
    st.percentile_list = values
    # fio prints labels with as many decimals as the longest fraction written ("99.999th").
    st.percentile_precision = max(len(_fraction_digits(p)) for p in items)


def _fraction_digits(text: str) -> str:
    """The digits right after the decimal point of a number as written."""
    _, dot, rest = text.strip().partition(".")
    digits = ""
    for c in rest if dot else "":
        if not c.isdigit():
            break
        digits += c
    return digits


def _h_randseed(st: JobState, v: _Value) -> None:
    st.randseed = parse_fio_count(v.single(), st.kb_base)


#: fio's ioengines: those of fio-3.33's ``--cmdhelp=ioengine`` and of newer or other builds
#: (upstream ioengines.c and engines/ at fio-3.42); ``external:PATH`` or a path loads one
IOENGINES = frozenset("""
sync psync vsync pvsync pvsync2 libaio io_uring io_uring_cmd posixaio solarisaio windowsaio rbd mmap splice
netsplice sg null net cpuio rdma e4defrag falloc ftruncate gfapi gfapi_async pmemblk dev-dax filecreate filestat
filedelete dircreate dirstat dirdelete external libpmem nbd exec http mtd libhdfs libcufile libhipfile nfs dfs
xnvme libblkio rados ime_psync ime_psyncv ime_aio page_fault cpp_null spdk spdk_bdev guasi binject
""".split())


def _h_ioengine(st: JobState, v: _Value) -> None:
    text = v.text().strip()
    engine = text.split(":", 1)[0]
    if engine not in IOENGINES and "/" not in engine:
        guess = difflib.get_close_matches(engine, sorted(IOENGINES), n=1)
        hint = f" (did you mean '{guess[0]}'?)" if guess else ""
        raise ValueProblem(f"no such fio ioengine '{engine}'{hint} (fio --enghelp lists them; external:PATH "
                           "loads one of your own)")
    st.ioengine = text


def _h_buffered(st: JobState, v: _Value) -> None:
    st.direct = not v.flag(boolean=True)


def _h_zonesize(st: JobState, v: _Value) -> None:
    st.zonesize = parse_fio_bytes(v.single(), st.kb_base, notes=v.notes)


def _h_verify(st: JobState, v: _Value) -> None:
    _CHOICE_CHECKS["verify"](v)
    st.verify = v.text().strip()


_HANDLERS: dict[str, Callable[[JobState, _Value], None]] = {
    "name": _h_string("name"),
    "description": lambda st, v: None if v.opt.value is None else v.text(),  # fio refuses description=
    "kb_base": _h_kb_base,
    "unit_base": _h_unit_base,
    "rw": _h_rw,
    "rwmixread": _h_rwmix(True),
    "rwmixwrite": _h_rwmix(False),
    "bs": _h_bs,
    "ba": _h_ba,
    "bsrange": _h_bsrange,
    "bssplit": _h_bssplit,
    "iodepth": _h_count("iodepth", minimum=1),
    "iodepth_batch": _h_count("iodepth_batch"),
    "numjobs": _h_count("numjobs", minimum=1),
    "size": _h_size("size"),
    "io_size": _h_size("io_size", zero_unsets=True),
    "filesize": _h_filesize,
    "offset": _h_offset("offset"),
    "offset_increment": _h_offset("offset_increment"),
    "number_ios": _h_count("number_ios"),
    "loops": _h_count("loops", zero_means=1),
    "runtime": _time("runtime_us", seconds=True),
    "time_based": _h_flag("time_based"),
    "ramp_time": _time("ramp_time_us", seconds=True),
    "startdelay": _h_startdelay,
    "thinktime": _time("thinktime_us", seconds=False),
    "thinktime_blocks": _h_count("thinktime_blocks", zero_means=1),
    "rate": _h_rate("rate", counts=False),
    "rate_iops": _h_rate("rate_iops", counts=True),
    "rate_process": _h_choice("rate_process", ("linear", "poisson")),
    "fsync": _h_count("fsync"),
    "fdatasync": _h_count("fdatasync"),
    "norandommap": _h_flag("norandommap"),
    "random_distribution": _h_random_distribution,
    "randrepeat": _h_flag("randrepeat", boolean=True),
    "randseed": _h_randseed,
    "group_reporting": _h_flag("group_reporting"),
    "new_group": _h_flag("new_group"),
    "stonewall": _h_flag("stonewall"),
    "wait_for": _h_string("wait_for"),
    "filename": _h_string("filename"),
    "percentile_list": _h_percentile_list,
    "ioengine": _h_ioengine,
    "direct": _h_flag("direct", boolean=True),
    "buffered": _h_buffered,
    "zonesize": _h_zonesize,
    "fill_device": _h_flag("fill_device", boolean=True),
    "verify": _h_verify,
    "do_verify": _h_flag("do_verify", boolean=True),
    "verify_backlog": _h_count("verify_backlog"),
    # fio's nr_files is an unsigned int (thread_options.h), as the core's entry numbers
    "nrfiles": _h_count("nrfiles", minimum=1, maximum=(1 << 32) - 1),
    "read_iolog": _h_string("read_iolog"),
    "replay_no_stall": _h_flag("replay_no_stall", boolean=True),
    "replay_time_scale": _h_count("replay_time_scale", minimum=1),
    "replay_redirect": _h_string("replay_redirect"),
    "ioscheduler": _h_string("ioscheduler"),
}



def _percentages(most: int, *, whole: bool = True) -> Callable[[_Value], None]:
    """A check of an option ssdlab does not model but fio range-checks: up to ``most``
    comma-separated percentages (read,write,trim), each from 0 to 100."""
    def check(v: _Value) -> None:
        parts = v.numeric().split(",")
        if len(parts) > most:
            raise ValueProblem(f"expected at most {most} value{'s' if most > 1 else ''}, got '{v.text()}'")
        for raw in parts:
            if not raw.strip():
                continue
            value = _float(raw, "a percentage")
            if not 0 <= value <= 100:
                raise ValueProblem(f"must be between 0 and 100, got {raw.strip()}")
    return check


def _choices(values: str) -> Callable[[_Value], None]:
    """A check of an option whose value is one of fio's words (its ``valid values``): the
    part before a ``:`` or ``,`` must be one of them, as fio's parser compares them."""
    allowed = tuple(values.split())

    def check(v: _Value) -> None:
        text = v.text().strip()
        head = text.replace(",", ":").split(":", 1)[0]
        if head not in allowed:
            raise ValueProblem(f"expected one of {', '.join(allowed)}, got '{text}'")
    return check


def _boolean(v: _Value) -> None:
    """fio's boolean options: bare, 0 or 1 (fio refuses 2, yes, true)."""
    if v.opt.value is not None and v.numeric().strip() not in ("0", "1"):
        raise ValueProblem(f"expected 0 or 1, got '{v.text()}'")


def _needs_value(v: _Value) -> None:
    """An option the report reads whose empty value fio refuses ("failed parsing bwavgtime=")."""
    v.text()


def _switch_read(v: _Value) -> None:
    """A "empty or boolean value" option the report reads (``thread``): bare, or a whole number
    (0 is off), which the report reads as fio does."""
    if v.opt.value is not None and not v.numeric().strip().isdigit():
        raise ValueProblem(f"expected 0 or 1, got '{v.text()}'")


def _cpu_list(v: _Value) -> None:
    """A list of CPUs, as ``cpus_allowed`` and ``numa_cpu_nodes`` take it: ``0-3,8``. fio reads
    a word with atoi (``zz`` is CPU 0): a list that is not one is refused here."""
    text = v.text().strip()
    for part in text.split(","):
        ends = part.strip().split("-")
        if not 1 <= len(ends) <= 2 or not all(e.strip().isdigit() for e in ends):
            raise ValueProblem(f"expected a list of CPUs such as 0-3,8, got '{text}'")


def _whole_number(lo: int | None = None, hi: int | None = None) -> Callable[[_Value], None]:
    """fio's integer options (FIO_OPT_INT, "integer value" in ``fio --cmdhelp``): a whole number
    as its size parser reads it (``4k``, ``0x10``), within the option's bounds. As fio's parse.c
    checks them: a minimum of 0 is not checked (``prio=-1`` passes), a maximum only where the
    option has one."""
    def check(v: _Value) -> None:
        n = parse_fio_count(v.single(), negative=True)
        if lo and n < lo:
            raise ValueProblem(f"expected at least {lo}, got '{v.text()}'")
        if hi is not None and n > hi:
            raise ValueProblem(f"expected at most {hi}, got '{v.text()}'")
    return check


# fio's integer options that ssdlab does not model, with their bounds (``fio --cmdhelp=NAME``,
# fio-3.33: "range: min=..., max=..."; max=-1 is none). Those fio reads as times or per
# direction (thinktime_spin, max_latency, rate_min, ...) are checked as fio reads them
# (_FIO_NUMBERS); log_avg_msec and the like are read by the report (reporting.py).
_WHOLE_NUMBERS: dict[str, Callable[[_Value], None]] = {
    "nice": _whole_number(-20, 19), "prio": _whole_number(hi=7), "prioclass": _whole_number(hi=3),
    "cgroup_weight": _whole_number(100, 1000), "flow": _whole_number(hi=1000),
    "buffer_compress_percentage": _whole_number(hi=100), "dedupe_percentage": _whole_number(hi=100),
    "dedupe_working_set_percentage": _whole_number(hi=100), "significant_figures": _whole_number(1, 10),
    "log_entries": _whole_number(1024, 1048576), "log_compression": _whole_number(1024, 536870912),
    "job_max_open_zones": _whole_number(hi=4096), "max_open_zones": _whole_number(hi=4096),
    "verify_interval": _whole_number(80), "verify_offset": _whole_number(40),
    **{name: _whole_number() for name in (
        "buffer_compress_chunk", "cpumask", "flow_id", "gid", "gtod_cpu", "hugepage-size",
        "iodepth_batch_complete_max", "iodepth_batch_complete_min", "iodepth_low", "log_alternate_epoch_clock_id",
        "log_hist_coarseness", "offset_align", "trim_backlog_batch", "uid", "verify_async", "verify_backlog_batch",
        "write_barrier")},
}



# What fio 3.33's parser (parse.c) takes of an option it reads as a number but ssdlab does
# not model: ssdlab refuses what fio refuses and warns of the rest, so a value fio takes
# (``max_latency=10x``, ``rate_min=abc,1m``) is only said to be not modelled. fio reads a
# value in parts: the whole value, then what follows each ',' (else each ':', else each '-'),
# each read up to where its number stops; the value is refused only when no part is read
# (handle_option keeps the first success).


def _fio_parts(text: str, separators: str = ",:-") -> list[str]:
    parts = [text]
    rest = text
    while True:
        cuts = [rest.find(c) for c in separators]
        cut = next((c for c in cuts if c >= 0), -1)
        if cut < 0:
            return parts
        rest = rest[cut + 1:]
        parts.append(rest)


_STRTOLL = {10: re.compile(r"\s*[+-]?(\d+)"), 16: re.compile(r"\s*[+-]?(?:0[xX])?([0-9a-fA-F]+)")}
_SCANF_HEX = re.compile(r"\s*[+-]?0[xX]([0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?\d+)?")
_SCANF_FLOAT = re.compile(r"\s*[+-]?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?|inf|nan)", re.IGNORECASE)


def _fio_strtoll(part: str) -> tuple[int, int] | None:
    """The number C's strtoll reads at the start of ``part`` as fio's str_to_decimal calls
    it (base 16 when the text holds 0x) and where it stops, or None when it reads none."""
    base = 16 if "0x" in part.lower() else 10
    m = _STRTOLL[base].match(part)
    if not m:
        return None
    sign = -1 if m.group(0).lstrip().startswith("-") else 1
    return sign * int(m.group(1), base), m.end()


def _fio_decimal(part: str) -> int | None:
    """What str_to_decimal reads (strtoll's overflow refused), without its unit."""
    read = _fio_strtoll(part)
    if read is None or not -(1 << 63) <= read[0] <= (1 << 63) - 1:
        return None
    return read[0]


def _fio_check_int(part: str) -> int | None:
    """What fio's check_int reads (sscanf %u, or %x with 0x) as the int it stores it in."""
    read = _fio_strtoll(part)
    if read is None:
        return None
    n = read[0] % (1 << 64) if abs(read[0]) < (1 << 64) else (1 << 64) - 1
    n &= 0xFFFFFFFF
    return n - (1 << 32) if n >= 1 << 31 else n


def _fio_number(hint: str) -> Callable[[_Value], None]:
    """fio's integer options with no bound (FIO_OPT_INT or FIO_OPT_ULL, ``range: min=0,
    max=-1``), times among them: refused only when no part of the value holds a number."""
    def check(v: _Value) -> None:
        text = v.text()
        if text.strip().startswith("("):
            evaluate(text)  # fio's arithmetic (ssdlab reads it as it does elsewhere)
            return
        if all(_fio_decimal(part) is None for part in _fio_parts(text)):
            raise ValueProblem(f"{hint}, got '{text}'")
    return check


def fio_time_read(text: str) -> tuple[int, str]:
    """A time option that ssdlab only reports (``latency_target``, ``latency_window``: a bare
    number is microseconds) as fio 3.33 stores it: the first part of the value that holds a
    number (fio keeps the first success), read as str_to_decimal reads it
    (:func:`fio_time_as_read`: ``1k`` and ``1.5ms`` are 1 us). Returns microseconds and, when
    that is not what the text says, why. Refuses what fio refuses, and a negative time (which
    fio stores wrapped around) or one too large to report. fio 3.33 reads no arithmetic in a
    time (``latency_target=(6)`` is "failed parsing"), nor does this."""
    for part in _fio_parts(text):
        if _fio_decimal(part) is None:
            continue
        read = fio_time_as_read(part, seconds_default=False)
        assert read is not None
        us, why = read
        if us < 0:
            raise ValueProblem(f"expected a time of 0 or more, got '{text}' (fio stores it wrapped around)")
        if us * 1000 > (1 << 63) - 1:
            raise ValueProblem(f"time too large, got '{text}'")
        if part != text:
            why = f"the first part that holds a number is '{part}'" + (f", and {why}" if why else "")
        return us, why
    raise ValueProblem(f"{TIME_HINT}, got '{text}'")


def _fio_time(v: _Value) -> None:
    """``latency_target`` and ``latency_window``, read by the report as fio reads them."""
    text = v.text()
    us, why = fio_time_read(text)
    if why:
        v.notes.append(f"fio reads '{text}' as {us} us ({why}); ssdlab reports the same")


def _fio_switch(v: _Value) -> None:
    """fio's "empty or boolean value" options (FIO_OPT_STR_SET): bare, or a value whose
    parts hold a number as its check_int reads it."""
    if v.opt.value is None:
        return
    text = v.text()
    if all(_fio_check_int(part) is None for part in _fio_parts(text)):
        raise ValueProblem(f"expected 0 or 1, got '{text}'")


def _fio_boolean(v: _Value) -> None:
    """fio's boolean options (FIO_OPT_BOOL, ``range: min=0, max=1``) that ssdlab does not
    read: a value is needed, and a part must read as at most 1 (check_int's int: -1 passes
    the minimum of 0, which fio's parse.c does not check)."""
    if v.opt.value == "":
        raise ValueProblem("expected 0 or 1, got an empty value")
    text = v.text()
    if not any(n is not None and n <= 1 for n in map(_fio_check_int, _fio_parts(text))):
        raise ValueProblem(f"expected 0 or 1, got '{text}'")


def _fio_power_of_2(v: _Value) -> None:
    """``replay_align``: a size (4k is 4096) that fio's parser refuses unless it is a power
    of 2 ("replay_align: must be a power-of-2"), as an unsigned 64-bit number; refused when
    no part of the value is one."""
    def power(part: str) -> bool:
        n = _fio_decimal(part)
        if n is None:
            return False
        suffix = re.match(r"[A-Za-z]*", part[_fio_strtoll(part)[1]:]).group(0)
        try:
            n *= parse_fio_count("1" + suffix) if suffix else 1
        except ValueProblem:
            pass  # fio's size parser multiplies by 1 a unit it does not know
        n %= 1 << 64
        return n != 0 and not n & (n - 1)

    text = v.text()
    if not any(power(part) for part in _fio_parts(text)):
        raise ValueProblem(f"expected a power of 2, got '{text}'")


def _fio_floats(most: int, lo: float | None = None, hi: float | None = None) -> Callable[[_Value], None]:
    """fio's lists of floating point values separated by ':' (FIO_OPT_FLOAT_LIST): up to
    ``most`` of them, read by sscanf %lf, within ``lo``..``hi``; refused when none is."""
    def ok(index: int, part: str) -> bool:
        if index >= most:
            return False
        if re.match(r"\s*[+-]?0[xX]", part):
            m = _SCANF_HEX.match(part)
            value = float.fromhex(m.group(0).strip()) if m else None
        else:
            m = _SCANF_FLOAT.match(part)
            value = float(m.group(0)) if m else None
        if value is None:
            return False
        return not ((hi is not None and value > hi) or (lo is not None and value < lo))

    def check(v: _Value) -> None:
        text = v.text()
        if not any(ok(i, part) for i, part in enumerate(_fio_parts(text, ":"))):
            within = f" from {lo:g} to {hi:g}" if lo is not None and hi is not None else ""
            raise ValueProblem(f"expected {'a number' if most == 1 else 'numbers separated by :'}{within},"
                               f" got '{text}'")
    return check


# fio 3.33's options of those kinds that ssdlab does not model (``fio --cmdhelp=NAME``)
_FIO_NUMBERS: dict[str, Callable[[_Value], None]] = {
    # times (fio's is_time: a bare number is microseconds, thinktime_iotime's seconds)
    **{name: _fio_number(TIME_HINT) for name in ("max_latency", "thinktime_spin", "thinktime_iotime")},
    # per direction (read,write,trim): bytes and I/Os per second
    "rate_min": _fio_number(SIZE_HINT), "rate_iops_min": _fio_number(INT_HINT),
    **{name: _fio_number(INT_HINT) for name in ("rate_cycle", "flow_sleep", "replay_scale", "log_hist_msec",
                                                "iomem_align")},
    "zoneskip": _fio_number(SIZE_HINT),
    "replay_align": _fio_power_of_2,
    **{name: _fio_switch for name in ("exitall", "exitall_on_error", "bs_unaligned", "verify_only",
                                      "zero_buffers", "refill_buffers")},
    "zone_reset_threshold": _fio_floats(1, 0.0, 1.0), "zone_reset_frequency": _fio_floats(1, 0.0, 1.0),
    "merge_blktrace_scalars": _fio_floats(MAX_PERCENTILES), "merge_blktrace_iters": _fio_floats(MAX_PERCENTILES),
}

# fio's ``valid values`` of the options it checks against a list (``fio --cmdhelp=NAME``, fio-3.33)
_CHOICE_CHECKS: dict[str, Callable[[_Value], None]] = {
    "clocksource": _choices("gettimeofday clock_gettime cpu"),
    "continue_on_error": _choices("none read write io verify all 0 1"),
    "cpus_allowed_policy": _choices("shared split"),
    # fio's FIO_OPT_STR_MULTI: the first of its words separated by ':' or ',' is checked
    "sync_file_range": _choices("wait_before write wait_after"),
    "dedupe_mode": _choices("repeat working_set"),
    "exit_what": _choices("group stonewall all"),
    "fadvise_hint": _choices("0 1 random sequential"),
    "fallocate": _choices("none native posix keep truncate 0 1"),
    "file_service_type": _choices("random zipf pareto normal gauss roundrobin sequential"),
    "io_submit_mode": _choices("inline offload"),
    "lockfile": _choices("none exclusive readwrite"),
    "mem": _choices("malloc shm shmhuge mmap mmapshared mmaphuge cudamalloc"),
    "iomem": _choices("malloc shm shmhuge mmap mmapshared mmaphuge cudamalloc"),
    "random_generator": _choices("tausworthe lfsr tausworthe64"),
    "rw_sequencer": _choices("sequential identical"),
    # fio's filestat engine's option (engines/filestat.c: stat, lstat, statx)
    "stat_type": _choices("stat lstat statx"),
    "sync": _choices("none 0 sync 1 dsync"),
    "thinktime_blocks_type": _choices("complete issue"),
    "unified_rw_reporting": _choices("none mixed both 0 1 2"),
    "verify": _choices("0 md5 crc64 crc32 crc32c-intel crc32c crc16 crc7 sha1 sha256 sha512 sha3-224 sha3-256 "
                       "sha3-384 sha3-512 xxhash meta pattern null"),
    "write_hint": _choices("none short medium long extreme"),
    "zonemode": _choices("none strided zbd"),
}

# fio's boolean options whose value is only checked here (``type: boolean`` in ``fio --cmdhelp``,
# by their own names: allrandrepeat, log_unix_epoch and log_max_value are aliases of options
# read elsewhere): those in REPORTED are honoured by the report (bare, 0 or 1), the others are
# not modelled and checked as fio 3.33 reads them (_fio_boolean: 1k, -1, 1.5, 0x1 and 2,1 pass;
# a bare name, 2, 0x10 and abc are refused)
_BOOLEANS = frozenset("""
unique_filename serialize_overlap file_append atomic overwrite verify_fatal verify_dump
experimental_verify verify_state_load verify_state_save trim_verify_zero read_iolog_chunked read_beyond_wp
ignore_zone_limits rate_ignore_thinktime latency_run invalidate create_serialize create_fsync create_on_open
create_only allow_file_create allow_mounted_write pre_read end_fsync fsync_on_close unlink unlink_each_loop
log_prio log_store_compressed log_alternate_epoch block_error_percentiles
stats scramble_buffers dedupe_global clat_percentiles lat_percentiles slat_percentiles disk_util gtod_reduce
disable_lat disable_clat disable_slat disable_bw_measurement error_dump cgroup_nodelete softrandommap
bs_is_seq_rand
""".split())
#: fio's boolean options ssdlab only warns about (not modelled): refused exactly where fio 3.33 refuses them
NOT_MODELLED_BOOLEANS = _BOOLEANS - REPORTED

# Valid fio options that are not modelled but whose values fio checks (a range, a list of
# words, a boolean, a CPU list): ssdlab refuses what fio refuses, then warns that the rest is
# not modelled.
_RANGE_CHECKS: dict[str, Callable[[_Value], None]] = {
    **_CHOICE_CHECKS,
    **{name: _boolean if name in REPORTED else _fio_boolean for name in _BOOLEANS},
    **_WHOLE_NUMBERS,
    **_FIO_NUMBERS,
    "cpus_allowed": _cpu_list,
    "numa_cpu_nodes": _cpu_list,
    "percentage_random": _percentages(3),
    "percentage_sequential": _percentages(3),
    "cmdprio_percentage": _percentages(2),
    "trim_percentage": _percentages(1),
    "latency_percentile": _percentages(1),
    # read by the report (reporting.py), which took an empty value as the default and read a
    # word as off (per_job_logs=abc, thread=abc): fio 3.33 refuses both
    **{name: _needs_value for name in ("bwavgtime", "iopsavgtime", "log_avg_msec", "steadystate_duration",
                                       "steadystate_ramp_time")},
    # reported as fio reads them (fio_time_read): 1k is 1 us, 1.5ms is 1 us
    "latency_target": _fio_time, "latency_window": _fio_time,
    "per_job_logs": _boolean, "log_offset": _boolean, "thread": _switch_read,
    # an int option (fio reads it with the size parser); 0 is nrfiles (fio's fixup_options)
    "openfiles": lambda v: parse_fio_count(v.single()),
}

# ioengine, direct, buffered, zonesize, fill_device, verify, do_verify, verify_backlog and nrfiles have
# handlers so that resolve.py, which sees the whole job, can word their warnings.


# --------------------------------------------------------------------------- fio comparison

SIZE_OPTIONS = frozenset({"bs", "ba", "size", "io_size", "filesize", "offset", "offset_increment",
                          "rate", "number_ios", "iodepth", "iodepth_batch", "numjobs", "loops", "rate_iops",
                          "thinktime_blocks", "fsync", "fdatasync", "rwmixread", "rwmixwrite",
                          "zonesize", "randseed", "nrfiles", "verify_backlog"})
TIME_SECONDS_OPTIONS = frozenset({"runtime", "ramp_time", "startdelay"})
TIME_US_OPTIONS = frozenset({"thinktime"})


def fio_numbers(key: str, value: str, kb_base: int = 1024) -> list[int]:
    """The numbers fio's parser stores for ``key=value`` (bytes, counts, or microseconds),
    one per value written, in the units ``fio --debug=parse`` prints. For tests."""
    name = canonical(key) or key
    out: list[int] = []
    for raw, sep in split_directions(value):
        if not raw.strip():
            continue
        if name in TIME_SECONDS_OPTIONS or name in TIME_US_OPTIONS:
            us = parse_fio_time_us(raw, seconds_default=name in TIME_SECONDS_OPTIONS,
                               before_range_separator=sep, notes=[])
            out.append(int(us))
        elif name in SIZE_OPTIONS:
            size = parse_fio_size(raw, kb_base, notes=[])
            assert isinstance(size, int)
            out.append(size)
        else:
            raise KeyError(name)
    return out


# ---- per-direction lists (read,write,trim) ------------------------------------------------


def split_directions(text: str, *, range_separators: bool = True) -> list[tuple[str, bool]]:
    """Split a per-direction value the way fio does: ``read,write,trim``.

    Without a comma, fio also splits numeric values at ``:`` (else ``-``), which is how
    ``startdelay=1-5`` becomes a range and ``bs=4k:8k`` sets read and write. Returns the
    parts with a flag telling whether a ``:``/``-`` separator followed the part.
    """
    if "," in text:
        parts = [(p, False) for p in text.split(",")]
    elif range_separators:
        parts = []
        rest = text
        while True:
            cut = rest.find(":")
            if cut < 0:
                cut = rest.find("-")
            if cut <= 0:
                parts.append((rest, False))
                break
            parts.append((rest[:cut], True))
            rest = rest[cut + 1:]
    else:
        parts = [(text, False)]
    if len(parts) > 3:
        raise ValueProblem(f"expected at most three values (read,write,trim), got '{text}'")
    return parts


def merge_directions(current: list, parts: list, parse: Callable[[str, bool], object]) -> list:
    """Apply parsed parts to a read/write/trim triple: blanks keep the current value, the
    last given value also fills the directions after it."""
    values = list(current)
    last = len(parts) - 1
    for i, (raw, before_sep) in enumerate(parts):
        if not raw.strip():
            continue
        value = parse(raw, before_sep)
        for j in range(i, 3 if i == last else i + 1):
            values[j] = value
    return values
