"""filebench workload files (``.f``, its Workload Model Language) in, the core's file
workload out; filebench's summary of a run printed back.

    >>> w = load("fileserver")                    # a personality shipped with ssdlab
    >>> core = to_core(w, target_index=0)         # {"file_sets": [...], "threads": [...], ...}
    >>> text = summary(w, per_thread_op_summaries, elapsed_s=60.0)

* :func:`load` reads a file, text, or a personality's name (:data:`PERSONALITIES`); anything
  ssdlab cannot simulate faithfully is in :attr:`Workload.warnings` (``FILE:LINE: what``, one
  line each) or raises :class:`FilebenchError` (``FILE:LINE: what``, one line, a
  ``ValueError``) — never another exception for bad input.
* :func:`to_core` gives plain dicts in the shape of the core's ``FileSetSpec`` and
  ``FileAccess`` (``crates/ssdlab-core/src/workload/files.rs``), checked by the models of
  :mod:`ssdlab.filebench.model`: ``{"file_sets": [...], "threads": [{"name":
  "process.thread", "instances": N, "files": FileAccess}], "run_seconds": 60.0 | None,
  "quit": "timeout" | "firstdone" | "alldone"}``.
* :func:`summary` formats filebench 1.5-alpha3's end-of-run summary from the core's per-op
  statistics (``OpSummary``: ``ops, bytes, errors, latency_ns, max_latency_ns``).

File sizes: a fileset's ``size=N`` is, as filebench 1.4.9 draws it, gamma-distributed with mean
N and shape ``filesizegamma``/1000 (default 1500: shape 1.5); ``plain_size="fixed"`` reads it
as filebench 1.5 does (every file N bytes; a distribution only through ``cvar(...)``).
``filesizegamma=0`` and ``define file`` give fixed sizes either way.
"""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path
from typing import Literal

from .build import FileSet, Flowop, Thread, Workload, build
from .errors import FilebenchError
from .model import CoreFileWorkload
from .parser import parse
from .summary import flowop_stats, summary

__all__ = ["FilebenchError", "FileSet", "Flowop", "PERSONALITIES", "Thread", "Workload", "flowop_stats", "load",
           "personality_path", "summary", "to_core"]

#: the standard personalities, written for ssdlab with filebench's parameters
PERSONALITIES = ("fileserver", "varmail", "webserver", "webproxy", "oltp", "createfiles", "copyfiles")


def personality_path(name: str) -> Path:
    """The ``.f`` file of a shipped personality."""
    if name not in PERSONALITIES:
        raise FilebenchError(f"no personality '{name}' (there are: {', '.join(PERSONALITIES)})", path=name)
    return Path(str(resources.files(__package__) / "personalities" / f"{name}.f"))


def _loader(name: str, path: str, line: int) -> tuple[str, str]:
    """``load NAME`` (filebench 1.4) of a shipped personality."""
    if name not in PERSONALITIES:
        raise FilebenchError(f"load {name}: no such personality (there are: {', '.join(PERSONALITIES)})",
                             path=path, line=line)
    p = personality_path(name)
    return p.read_text(encoding="utf-8"), str(p)


def _read(p: Path) -> str:
    try:
        return p.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise FilebenchError(f"cannot read workload file: {exc.strerror or exc}", path=str(p)) from None


def load(path_or_text: str | os.PathLike[str], *, plain_size: Literal["gamma", "fixed"] = "gamma",
         name: str | None = None) -> Workload:
    """A workload from a file, from a personality's name, or from WML text. A string is text
    when ``name`` is given (how messages name it) or it holds white space; else a
    personality's name, or a path when it has a ``/``, ends in ``.f`` or names a file; else
    text."""
    if plain_size not in ("gamma", "fixed"):
        raise ValueError(f"plain_size: expected 'gamma' or 'fixed', got {plain_size!r}")
    if isinstance(path_or_text, os.PathLike):
        p = Path(path_or_text)
        text, where = _read(p), str(p)
    elif not isinstance(path_or_text, str):
        raise TypeError(f"load() takes a path or text, not {type(path_or_text).__name__}")
    elif name is not None or any(c.isspace() for c in path_or_text) or not path_or_text:
        text, where = path_or_text, name or "<string>"
    elif path_or_text in PERSONALITIES:
        p = personality_path(path_or_text)
        text, where = p.read_text(encoding="utf-8"), str(p)
    elif "/" in path_or_text or path_or_text.endswith(".f") or Path(path_or_text).exists():
        p = Path(path_or_text)
        text, where = _read(p), str(p)
    else:
        text, where = path_or_text, name or "<string>"
    if "\x00" in text:
        raise FilebenchError("not a workload file (it holds NUL bytes)", path=where)
    try:
        script = parse(text, where, loader=_loader)
        return build(script, plain_size=plain_size)
    except RecursionError:
        raise FilebenchError("nested too deeply", path=where) from None


#: What a flowop that cannot obtain a file (FILEBENCH_NORSC) does under each ``set mode quit``
#: (flowop.c's ``flowop_start``): the thread is done, and unless every thread is to be waited
#: for (``alldone``), the run stops.
NO_FILE = {"timeout": "end-run", "firstdone": "end-run", "alldone": "end-thread"}


def to_core(workload: Workload, target_index: int = 0) -> dict:
    """The core's description of the workload, every file set on target ``target_index``."""
    if isinstance(target_index, bool) or not isinstance(target_index, int) or target_index < 0:
        raise ValueError(f"target_index: expected a whole number >= 0, got {target_index!r}")
    doc = {
        "file_sets": [fs.core(target_index) for fs in workload.file_sets],
        "threads": [{"name": t.full_name, "instances": t.instances, "files": t.core(NO_FILE[workload.quit])}
                    for t in workload.threads],
        "run_seconds": workload.run_seconds,
        "quit": workload.quit,
    }
    out = CoreFileWorkload.model_validate(doc).model_dump()
    for t in out["threads"]:  # each operation's tag first, as written in the core's docs
        prog = t["files"]["program"]
        prog["ops"] = [{"op": o["op"], **{k: v for k, v in o.items() if k != "op"}} for o in prog["ops"]]
    return out
