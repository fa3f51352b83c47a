"""The core's file-workload description, as pydantic models that refuse unknown keys.

Each class mirrors one type of ``crates/ssdlab-core/src/workload/files.rs``; the field names
are the JSON keys the core reads and the ``kind``/``op`` tags are its serde tags, so
``model_dump()`` of these is what the core deserialises. They are built here only to check
the shape; :func:`ssdlab.filebench.to_core` returns plain dicts.
"""

from __future__ import annotations

from typing import Annotated, Literal, Optional, Union

from pydantic import BaseModel, ConfigDict, Field


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class FixedSize(_Strict):
    kind: Literal["fixed"] = "fixed"
    bytes: int = Field(ge=0)


class UniformSize(_Strict):
    kind: Literal["uniform"] = "uniform"
    min: int = Field(ge=0)
    max: int = Field(ge=0)
    align: int = Field(ge=1)


class GammaSize(_Strict):
    kind: Literal["gamma"] = "gamma"
    mean: int = Field(gt=0)
    shape: float = Field(gt=0)
    max: int = Field(gt=0)


SizeSpec = Annotated[Union[FixedSize, UniformSize, GammaSize], Field(discriminator="kind")]


class FileSetSpec(_Strict):
    name: str
    target: int = Field(default=0, ge=0)
    dir: str
    entries: int = Field(ge=1)
    size: SizeSpec
    dir_width: int = Field(default=0, ge=0)
    prealloc: float = Field(default=0.0, ge=0.0, le=1.0)


class PickRandom(_Strict):
    kind: Literal["random"] = "random"


class PickNext(_Strict):
    kind: Literal["next"] = "next"


class PickEvery(_Strict):
    kind: Literal["every"] = "every"
    first: int = Field(ge=0)
    step: int = Field(ge=1)


Pick = Annotated[Union[PickRandom, PickNext, PickEvery], Field(discriminator="kind")]


class _SetOp(_Strict):
    set: int = Field(ge=0)
    pick: Pick = PickRandom()


class Create(_SetOp):
    op: Literal["create"] = "create"


class Open(_SetOp):
    op: Literal["open"] = "open"


class Delete(_SetOp):
    op: Literal["delete"] = "delete"


class Stat(_SetOp):
    op: Literal["stat"] = "stat"


class Close(_Strict):
    op: Literal["close"] = "close"


class WriteWhole(_Strict):
    op: Literal["write_whole"] = "write_whole"
    io_bytes: int = Field(ge=1)


class ReadWhole(_Strict):
    op: Literal["read_whole"] = "read_whole"
    io_bytes: int = Field(ge=1)


class Append(_Strict):
    op: Literal["append"] = "append"
    size: SizeSpec
    io_bytes: int = Field(ge=1)


class Read(_Strict):
    op: Literal["read"] = "read"
    io_bytes: int = Field(ge=1)
    random: bool


class Write(_Strict):
    op: Literal["write"] = "write"
    io_bytes: int = Field(ge=1)
    random: bool


class Fsync(_Strict):
    op: Literal["fsync"] = "fsync"
    data_only: bool = False


class ListDir(_Strict):
    op: Literal["list_dir"] = "list_dir"
    set: int = Field(ge=0)


class Delay(_Strict):
    op: Literal["delay"] = "delay"
    ns: int = Field(ge=0)
    busy: bool = False


FileOp = Annotated[
    Union[Create, Open, Close, WriteWhole, Append, ReadWhole, Read, Write, Fsync, Delete, Stat, ListDir, Delay],
    Field(discriminator="op"),
]


class FileProgram(_Strict):
    ops: list[FileOp] = Field(min_length=1)
    loops: Optional[int] = Field(default=None, ge=1)
    #: an operation that finds no file of its kind: "fail" (counted, the program goes on),
    #: "end-thread" or "end-run" (filebench's FILEBENCH_NORSC, by its quit mode)
    on_no_file: Literal["fail", "end-thread", "end-run"] = "fail"


class FileAccess(_Strict):
    set: int = Field(ge=0)
    direct: bool = False
    service: Literal["roundrobin", "sequential", "random"] = "roundrobin"
    end_fsync: bool = False
    unlink: bool = False
    program: Optional[FileProgram] = None


class CoreThread(_Strict):
    """One filebench thread as the core's jobs: ``instances`` clones of ``files``."""

    name: str
    instances: int = Field(ge=1)
    files: FileAccess


class CoreFileWorkload(_Strict):
    """What :func:`ssdlab.filebench.to_core` returns."""

    file_sets: list[FileSetSpec]
    threads: list[CoreThread]
    run_seconds: Optional[float] = Field(default=None, gt=0)
    #: filebench's ``set mode quit``: "timeout" (the run lasts run_seconds), "firstdone" (it
    #: ends when the first thread is done), "alldone" (when every thread is).
    quit: Literal["timeout", "firstdone", "alldone"] = "timeout"
