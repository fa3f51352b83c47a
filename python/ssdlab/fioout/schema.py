"""fio's JSON output as ``ssdlab run``/``replay``/``measure --output-format json`` write it and
as the real fio writes it, as pydantic models, and the one reader of such files
(:func:`read_run`): ``ssdlab report``, ``compare`` and ``fit`` read a run only through it.

The models name every field those commands use, with its type and range: counts are whole
numbers >= 0, rates and latencies finite numbers >= 0, names strings. Keys they do not name are
allowed (fio adds keys from release to release; ssdlab's device rows differ by kind), but a
value that is not JSON's plain kind of value is refused. A file that fails names itself, the
field (``jobs[0].read.iops``) and what was expected, in one line (:class:`RunFileError`).

ssdlab's own section (``"ssdlab"``) is that of a simulation (device rows, iostat, the time
series) or of a measurement (``"measured": true``, iostat, no device rows).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Annotated, Any, Union

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError, model_validator

from ..core_output import PowerCutReport

__all__ = ["FioRun", "RunFileError", "describe", "read_run"]


class RunFileError(ValueError):
    """A file that is not a run's JSON: one line naming the file, the field and what was expected."""


_CONFIG = ConfigDict(strict=True, extra="allow", allow_inf_nan=False, populate_by_name=True)

Count = Annotated[int, Field(ge=0)]
Number = Annotated[float, Field(ge=0)]  # finite (allow_inf_nan=False); a whole number is a number
AnyNumber = float  # finite, of either sign
#: a percentile's label as fio writes it ("99.000000")
Label = Annotated[str, StringConstraints(pattern=r"^\d+(\.\d+)?$")]
Scalar = Union[AnyNumber, int, str, bool, None]


class Latency(BaseModel):
    """fio's latency object (``slat_ns``, ``clat_ns``, ``lat_ns``)."""

    model_config = _CONFIG
    min: Count
    max: Count
    mean: Number
    stddev: Number
    N: Count
    percentile: dict[Label, Count] | None = None
    bins: dict[Label, Count] | None = None


class Direction(BaseModel):
    """One direction of a job (``read``, ``write``, ``trim``) as fio's add_ddir_status_json writes it."""

    model_config = _CONFIG
    io_bytes: Count
    bw_bytes: Number
    iops: Number
    runtime: Count
    total_ios: Count
    slat_ns: Latency
    clat_ns: Latency
    lat_ns: Latency


class Sync(BaseModel):
    model_config = _CONFIG
    total_ios: Count
    lat_ns: Latency


class Job(BaseModel):
    """One job (a reporting unit) of fio's ``jobs`` list."""

    model_config = _CONFIG
    jobname: str
    groupid: Count
    job_options: dict[str, str] = Field(default_factory=dict, alias="job options")
    #: per direction; with unified_rw_reporting=mixed fio writes only ``mixed``, with both all four
    read: Direction | None = None
    write: Direction | None = None
    trim: Direction | None = None
    mixed: Direction | None = None
    sync: Sync | None = None
    job_runtime: Count | None = None
    error: int = 0

    @model_validator(mode="after")
    def _has_directions(self) -> "Job":
        if self.mixed is None:
            for name in ("read", "write", "trim"):
                if getattr(self, name) is None:
                    raise ValueError(f"{name}: missing (or mixed alone, as unified_rw_reporting=mixed writes)")
        return self


class DiskUtil(BaseModel):
    """One ``disk_util`` entry (a device, an md array or one of its members)."""

    model_config = _CONFIG
    __pydantic_extra__: dict[str, Scalar]
    name: str
    read_ios: Count
    write_ios: Count
    util: Number


class DeviceRow(BaseModel):
    """A device's internal report, one flat row (``ssdlab.results._flat_internal``)."""

    model_config = _CONFIG
    __pydantic_extra__: dict[str, Scalar | list[Any]]
    name: str
    profile: str | None = None
    kind: str
    internal_utilization: Number | None = None
    channel_utilization: list[Number] = Field(default_factory=list)


class IostatRow(BaseModel):
    """iostat -x of one device over the run."""

    model_config = _CONFIG
    __pydantic_extra__: dict[str, AnyNumber | None]
    name: str


class Sample(BaseModel):
    """One row of the time series: its end (``t_s``) and the interval's figures (null: none)."""

    model_config = _CONFIG
    __pydantic_extra__: dict[str, AnyNumber | None]
    t_s: Number


class Ssdlab(BaseModel):
    """ssdlab's own section: a simulation's (device rows) or a measurement's (``measured``)."""

    model_config = _CONFIG
    profile: str | None = None
    host: str | None = None
    seed: Count | None = None
    scale: Number | None = None
    sim_time_s: Number | None = None
    events: Count | None = None
    measured: bool = False
    devices: list[DeviceRow] = Field(default_factory=list)
    iostat: list[IostatRow] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    timeseries: list[Sample] = Field(default_factory=list)
    #: what a power cut lost (the core's own report, checked field by field)
    power_cut: PowerCutReport | None = None


class FioRun(BaseModel):
    """A run's JSON: fio's (``jobs``, ``disk_util``) and, from ssdlab, its ``ssdlab`` section."""

    model_config = _CONFIG
    fio_version: str | None = Field(default=None, alias="fio version")
    global_options: dict[str, str] = Field(default_factory=dict, alias="global options")
    jobs: list[Job] = Field(min_length=1)
    disk_util: list[DiskUtil] = Field(default_factory=list)
    ssdlab: Ssdlab | None = None


# ---- messages --------------------------------------------------------------------------------

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_EXPECTED = {
    "int_type": "a whole number", "float_type": "a number", "string_type": "a string",
    "bool_type": "true or false", "dict_type": "an object", "model_type": "an object",
    "model_attributes_type": "an object", "list_type": "a list", "finite_number": "a finite number",
    "string_pattern_mismatch": "a percentile such as \"99.000000\"",
}


def _where(loc: tuple) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif _IDENT.match(str(part)):
            out += f".{part}" if out else str(part)
        else:
            out += f"[{json.dumps(str(part))}]"
    return out or "the top level"


def _shown(value: Any) -> str:
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    text = json.dumps(value) if value is None or isinstance(value, (bool, int, str)) else repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def describe(e: ValidationError) -> str:
    """The first problem pydantic found, as ``field: what was expected, got what``."""
    err = e.errors(include_url=False)[0]
    loc = tuple(p for p in err["loc"] if p not in ("function-after", "union"))
    if loc[-1:] == ("[key]",):  # a key of a table: said as the table, then the key
        loc = loc[:-2] + (f"key {json.dumps(str(loc[-2]))}",) if len(loc) >= 2 else loc[:-1]
    where = _where(loc[:-1]) + f": {loc[-1]}" if loc and str(loc[-1]).startswith("key ") else _where(loc)
    kind = err["type"]
    if kind == "missing":
        return f"{where}: missing"
    if kind == "greater_than_equal":
        return f"{where}: expected a number >= {err['ctx']['ge']:g}, got {_shown(err['input'])}"
    if kind == "value_error":  # a model's own check: its message, which may name a field first
        message = str(err["ctx"]["error"])
        field = message.split(":", 1)[0]
        return f"{where}.{message}" if _IDENT.match(field) and where != "the top level" else f"{where}: {message}"
    if kind == "too_short":
        return f"{where}: empty; expected at least one entry (fio reports every job it ran)"
    expected = _EXPECTED.get(kind)
    if expected is None:
        return f"{where}: {err['msg']}"
    return f"{where}: expected {expected}, got {_shown(err['input'])}"


# ---- reading ---------------------------------------------------------------------------------

#: what the commands that read a run ask for, for messages
EXPECTED = "expected fio's JSON output, as ssdlab run or measure --output-format json or fio itself write it"


def load_json(path: Path, expected: str, *, skip_to_brace: bool = False) -> Any:
    """The JSON value in the file at ``path``, or :class:`RunFileError` naming the file and what
    is wrong with it as JSON (``expected`` says what it should have been). ``skip_to_brace``:
    lines before the first ``{`` are skipped (fio prints notes before its JSON)."""
    from ..arguments import InputFileError, read_text

    try:
        text = read_text(path)
    except InputFileError as e:
        raise RunFileError(str(e) if str(e).endswith("no such file") else f"{e}; {expected}") from None
    start = max(text.find("{"), 0) if skip_to_brace else 0
    try:
        value, _ = json.JSONDecoder().raw_decode(text, start)
    except json.JSONDecodeError as e:
        raise RunFileError(f"{path}:{e.lineno}: not valid JSON ({e.msg}); {expected}") from None
    except RecursionError:
        raise RunFileError(f"{path}: JSON nested too deeply to read; {expected}") from None
    return value


def read_run(path: str | Path, expected: str = EXPECTED) -> dict[str, Any]:
    """A run's JSON from ``path``, checked against :class:`FioRun` (lines fio prints before
    its JSON are skipped). Returns the JSON as read: every field the models name has its type."""
    path = Path(path)
    value = load_json(path, expected, skip_to_brace=True)
    if not isinstance(value, dict) or "jobs" not in value:
        raise RunFileError(f"{path}: not an fio or ssdlab result (no \"jobs\" list); {expected}")
    try:
        FioRun.model_validate(value)
    except ValidationError as e:
        raise RunFileError(f"{path}: {describe(e)}") from None
    return value
