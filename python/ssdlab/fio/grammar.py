"""Job-file lines: comments, ``[sections]``, ``include`` and ``${VAR}`` expansion.

This layer knows nothing about what options mean. It turns one or more job files into
an ordered list of :class:`Section`, each holding the :class:`RawOption` lines written in
it (includes already spliced in), with the file and line every option came from so later
errors and warnings can point at it. Rules follow fio's ini reader:

* a line whose first non-blank character is ``;`` or ``#`` is a comment; anything after the
  first ``;`` or ``#`` on any other line is dropped too;
* ``[name]`` opens a section, and any name starting with ``global`` is a global section;
* ``include FILE`` splices FILE's lines into the current section (relative to the including
  file's directory; nesting allowed; a ``[`` line inside an included file is an error);
* ``${VAR}`` is replaced on every option line (empty when unset), then the keywords
  ``$pagesize``, ``$mb_memory`` and ``$ncpus``; a value that then holds ``+ - * /`` is
  computed the way fio does it, with bc (see ``keyword_math``).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from .errors import FioJobError

MAX_INCLUDE_DEPTH = 16
_ENV_VAR = re.compile(r"\$\{([^}]*)\}")
_KEYWORDS = ("pagesize", "mb_memory", "ncpus")
# ssdlab simulates a host rather than reading the one it runs on, so that a job file gives
# the same jobs everywhere. Callers can pass their own values.
DEFAULT_HOST = {"pagesize": 4096, "mb_memory": 16384, "ncpus": 8}


@dataclass(frozen=True)
class RawOption:
    """One ``key=value`` (or bare ``key``) line, after ``${VAR}`` and keyword expansion."""

    key: str
    value: str | None
    path: str
    line: int | None
    empty_vars: tuple[str, ...] = ()  # ${VAR}s on this line that expanded to ""
    keyword_math: bool = False  # a $keyword was replaced and the value has + - * /
    spaced: bool = False  # blanks around '=' (fio keeps them in the value)

    @property
    def text(self) -> str:
        return self.key if self.value is None else f"{self.key}={self.value}"


@dataclass
class Section:
    name: str
    is_global: bool
    path: str
    line: int
    file_index: int  # which job file (0-based) it came from: later files start a stonewall
    options: list[RawOption] = field(default_factory=list)


@dataclass
class _Context:
    env: Mapping[str, str]
    host: Mapping[str, int]


def strip_comment(line: str) -> str | None:
    """The meaningful part of a line, or None for blank and comment lines."""
    s = line.strip()
    if not s or s[0] in ";#":
        return None
    cut = min((i for i in (s.find(";"), s.find("#")) if i >= 0), default=len(s))
    return s[:cut].rstrip() or None


def parse_sources(
    sources: list[tuple[str, str, Path]],
    *,
    env: Mapping[str, str] | None = None,
    host: Mapping[str, int] | None = None,
) -> list[Section]:
    """Read job files given as ``(text, display_path, base_dir)`` into sections, in order."""
    ctx = _Context(env=os.environ if env is None else env, host={**DEFAULT_HOST, **(host or {})})
    sections: list[Section] = []
    for index, (text, path, base_dir) in enumerate(sources):
        sections.extend(_parse_file(text, path, Path(base_dir), index, ctx))
    return sections


def _parse_file(text: str, path: str, base_dir: Path, index: int, ctx: _Context) -> list[Section]:
    sections: list[Section] = []
    current: Section | None = None
    if "\x00" in text:
        # fio's fgets() ends each line at its first NUL; a file that holds one is not a job file
        raise FioJobError("not a job file (it holds NUL bytes)", path=path)
    for lineno, raw in enumerate(_lines(text), start=1):
        s = strip_comment(raw)
        if s is None:
            continue
        if s.startswith("["):
            current = Section(_section_name(s, path, lineno), False, path, lineno, index)
            current.is_global = current.name.startswith("global")
            sections.append(current)
            continue
        if current is None:
            what = "include" if _is_include(s) else f"option '{s.split('=', 1)[0].strip()}'"
            raise FioJobError(f"{what} outside of a [section]", path=path, line=lineno)
        if _is_include(s):
            target = _include_path(s, base_dir, path, lineno)
            current.options.extend(_read_include(target, ctx, [Path(path).resolve()], 1))
            continue
        current.options.append(_option(s, path, lineno, ctx))
    return sections


def _lines(text: str) -> list[str]:
    return text.lstrip("\ufeff").splitlines()


def _shown(s: str, most: int = 60) -> str:
    """A header as an error message quotes it: shortened if long."""
    return repr(s if len(s) <= most else s[:most] + "...")


def _section_name(s: str, path: str, lineno: int) -> str:
    if not s.endswith("]"):
        raise FioJobError(f"section header {_shown(s)} must end with ']'", path=path, line=lineno)
    name = s[1:-1]
    if not name.strip():
        raise FioJobError("empty section name", path=path, line=lineno)
    if "[" in name or "]" in name:
        raise FioJobError(f"section header {_shown(s)}: a job's name holds no '[' or ']'", path=path, line=lineno)
    return name


def _is_include(s: str) -> bool:
    return s.startswith("include") and (len(s) == 7 or s[7].isspace())


def _include_path(s: str, base_dir: Path, path: str, lineno: int) -> Path:
    name = s[7:].strip()
    if not name:
        raise FioJobError("include needs a file name", path=path, line=lineno)
    target = Path(name)
    if not target.is_absolute():
        target = base_dir / target
    if not target.is_file():
        raise FioJobError(f"include file '{name}' not found", path=path, line=lineno)
    return target


def _read_include(target: Path, ctx: _Context, stack: list[Path], depth: int) -> list[RawOption]:
    here = target.resolve()
    if here in stack or depth > MAX_INCLUDE_DEPTH:
        raise FioJobError("include loop or nesting too deep", path=str(target))
    try:
        text = target.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise FioJobError(f"cannot read include file: {exc.strerror}", path=str(target)) from None
    options: list[RawOption] = []
    for lineno, raw in enumerate(_lines(text), start=1):
        s = strip_comment(raw)
        if s is None:
            continue
        if s.startswith("["):
            raise FioJobError("sections are not allowed in included files", path=str(target), line=lineno)
        if _is_include(s):
            nested = _include_path(s, target.parent, str(target), lineno)
            options.extend(_read_include(nested, ctx, stack + [here], depth + 1))
            continue
        options.append(_option(s, str(target), lineno, ctx))
    return options


def _option(s: str, path: str, lineno: int, ctx: _Context) -> RawOption:
    empty: list[str] = []

    def expand(m: re.Match[str]) -> str:
        value = ctx.env.get(m.group(1), "")
        if not value:
            empty.append(m.group(1))
        return value

    s = _ENV_VAR.sub(expand, s)
    replaced = False
    for word in _KEYWORDS:
        token = "$" + word
        if token in s:
            s = s.replace(token, str(ctx.host[word]))
            replaced = True
    if "=" in s:
        key, value = s.split("=", 1)
        spaced = key != key.rstrip() or value != value.lstrip()
        key, value = key.strip(), value.strip()
    else:
        key, value, spaced = s.strip(), None, False
    if not key:
        raise FioJobError(f"missing option name in {s!r}", path=path, line=lineno)
    math = replaced and value is not None and any(c in value for c in "+-*/") and "'" not in value
    return RawOption(key, value, path, lineno, tuple(empty), math, spaced)
