"""A sweep's grid file: fixed settings, a cartesian ``[grid]`` and zipped ``[zip]`` lists.

    job = "job.fio"                      # relative to this file
    profile = "samsung-850-pro"          # or system = "system.toml", or raid.* keys
    [grid]                               # cartesian product of every list
    profile = ["samsung-850-pro", "samsung-970-pro-512"]
    "job.iodepth" = [1, 4, 16]           # any fio option, in every job
    seed = [1, 2]
    [zip]                                # these lists advance together (one axis)
    "job.bs" = ["4k", "128k"]
    "job.rw" = ["randread", "read"]

Top-level keys are the settings every run shares; a key under ``[grid]`` (a list, or one
value) or a ``[zip]`` group overrides them. ``[[zip]]`` gives several zip groups. Dotted keys
may be quoted (``"raid.level" = 5``) or nested (``[grid.raid]`` ``level = [5, 6]``).

Runs are numbered in the order of nested loops: the first axis slowest (``[grid]`` keys in the
file's order, then each zip group). Each run is keyed by a stable hash of its parameters and
of the files it names, so that a finished run is recognised when the sweep is run again.

Keys (the column names of the results):

=========================  ===================================================================
``job``                    fio job file (relative to the grid file)
``profile``                device profile: built-in name or TOML path
``system``                 system TOML (instead of ``profile``)
``host``                   host profile
``seed``                   the run's seed (default 0)
``precondition``           none | sequential | random[:PASSES]
``scale``                  fraction of the flash simulated
``until``                  jobs | rebuild
``scheduler``              every drive's I/O scheduler
``iosched.<tunable>``      a scheduler tunable (sysfs name and units), ``--host-set``
``queue.<setting>``        a block-queue setting (nomerges, max_sectors_kb, max_segments, nr_requests)
``host_set.<key>``         a host profile key (``--host-set``), e.g. host_set.mem (its RAM), host_set.memory.cpus
``job.<option>``           a fio option set in every job (``--set``)
``env.<NAME>``             a variable for ``${NAME}`` in the job file
``profile_set.<key>``      a profile key (``--profile-set``), e.g. profile_set.thermal.ambient_temperature
``raid.level``             an md array of ``raid.drives`` drives of ``profile`` (``--raid``)
``raid.drives``, ``raid.chunk``, ``raid.engine``, ``raid.spares``, ``raid.engine_set.<key>``
=========================  ===================================================================

Every mistake a key or value can be found to have before running is an error naming the grid
file, the line and the key; what only a combination of values gets wrong (RAID 6 of two
drives) is that run's ``error``.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import os
import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Callable, Iterator

__all__ = ["Grid", "GridError", "MAX_RUNS", "Run", "load_grid", "KEYS", "PREFIXES"]


class GridError(ValueError):
    """A grid file that cannot be used; the message names file:line and the key."""


#: the most runs a grid may have: a sweep holds its runs and their journal records in memory
MAX_RUNS = 100_000


# key -> (expected value, how it is said)
_STR = (str,)
_INT = (int,)
_NUM = (int, float)
_SCALAR = (str, int, float, bool)
KEYS: dict[str, tuple[tuple[type, ...], str]] = {
    "job": (_STR, "a fio job file path"),
    "profile": (_STR, "a profile name or TOML path"),
    "system": (_STR, "a system TOML path"),
    "host": (_STR, "a host profile name or TOML path"),
    "seed": (_INT, "a whole number"),
    "precondition": (_STR, "none, sequential or random[:PASSES]"),
    "scale": (_NUM, "a fraction in (0, 1]"),
    "until": (_STR, "jobs or rebuild"),
    "scheduler": (_STR, "a scheduler name"),
    "raid.level": (_INT, "a RAID level (0, 1, 10, 5, 6)"),
    "raid.drives": (_INT, "a number of drives"),
    "raid.chunk": ((str, int), "a chunk size, e.g. \"64k\""),
    "raid.engine": (_STR, "an engine name or TOML path"),
    "raid.spares": (_INT, "a number of spares"),
}
PREFIXES: dict[str, str] = {
    "job.": "a fio option",
    "env.": "a job-file variable",
    "profile_set.": "a profile key",
    "iosched.": "a scheduler tunable",
    "queue.": "a block-queue setting",
    "host_set.": "a host profile key",
    "raid.engine_set.": "an engine key",
}
_RAID = ("raid.level", "raid.drives", "raid.chunk", "raid.engine", "raid.spares")
_TABLES = ("grid", "zip")


def _key_problem(key: str) -> str | None:
    if key in KEYS:
        return None
    for prefix in sorted(PREFIXES, key=len, reverse=True):
        if key.startswith(prefix):
            return None if key[len(prefix):] else f"expected {prefix}<{PREFIXES[prefix].split(' ', 1)[1]}>"
    known = ", ".join([*KEYS, *(f"{p}<...>" for p in PREFIXES)])
    return f"unknown key (keys: {known})"


def _shown(value: Any) -> str:
    """A value as TOML writes it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value)


def option_text(value: Any) -> str:
    """A grid value as a fio option, sysfs setting or profile value is written."""
    if isinstance(value, bool):
        return "1" if value else "0"
    return str(value)


# ---- where keys are written ---------------------------------------------------------------

_BARE = re.compile(r"[A-Za-z0-9_\-]+")


def _key_parts(s: str, i: int) -> tuple[list[str], int] | None:
    """A TOML dotted key starting at ``s[i]``: its parts and the position after it."""
    parts: list[str] = []
    n = len(s)
    while True:
        while i < n and s[i] in " \t":
            i += 1
        if i >= n:
            return None
        if s[i] == '"':
            j = i + 1
            while j < n and s[j] != '"':
                j += 2 if s[j] == "\\" else 1
            if j >= n:
                return None
            parts.append(s[i + 1:j].replace('\\"', '"').replace("\\\\", "\\"))
            i = j + 1
        elif s[i] == "'":
            j = s.find("'", i + 1)
            if j < 0:
                return None
            parts.append(s[i + 1:j])
            i = j + 1
        else:
            m = _BARE.match(s, i)
            if not m:
                return None
            parts.append(m.group())
            i = m.end()
        while i < n and s[i] in " \t":
            i += 1
        if i < n and s[i] == ".":
            i += 1
            continue
        return parts, i


def key_lines(text: str, repeats: dict[tuple[str, str], int] | None = None) -> dict[tuple[str, str], int]:
    """(section, dotted key) -> 1-based line, for every key and table header in ``text``.
    Sections: ``""`` (top level), ``"grid"``, ``"zip.N"`` (the N-th zip group); a header's
    own entry has the key ``""``."""
    out: dict[tuple[str, str], int] = {}
    table: list[str] = []
    zips = 0  # zip groups opened so far
    in_string: str | None = None  # inside a multi-line string that started on an earlier line
    for number, line in enumerate(text.splitlines(), start=1):
        if in_string is not None:
            if line.count(in_string) % 2 == 1:
                in_string = None
            continue
        stripped = line.lstrip()
        if stripped.startswith("["):
            double = stripped.startswith("[[")
            parsed = _key_parts(stripped, 2 if double else 1)
            if parsed is None:
                continue
            table = parsed[0]
            if table[:1] == ["zip"]:
                if len(table) == 1 and (double or zips == 0):
                    zips += 1
                table = [f"zip.{max(zips - 1, 0)}", *table[1:]]
            section, rest = _section(table)
            out.setdefault((section, ".".join(rest)), number)
            continue
        parsed = _key_parts(line, 0)
        if parsed is not None and parsed[1] < len(line) and line[parsed[1]] == "=":
            section, rest = _section([*table, *parsed[0]])
            where = (section, ".".join(rest))
            if where in out and repeats is not None:
                repeats.setdefault(where, number)
            out.setdefault(where, number)
        for quote in ('"""', "'''"):
            if line.count(quote) % 2 == 1:
                in_string = quote
                break
    return out


def _section(path: list[str]) -> tuple[str, list[str]]:
    if path and (path[0] == "grid" or path[0].startswith("zip.")):
        return path[0], path[1:]
    if path[:1] == ["zip"]:
        return "zip.0", path[1:]
    return "", path


# ---- the grid --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Axis:
    """One dimension of the product: a ``[grid]`` key, or a zip group's keys together."""

    section: str
    keys: tuple[str, ...]
    values: tuple[tuple[Any, ...], ...]


@dataclass(frozen=True)
class Run:
    """One run of the sweep: its number, every parameter (the grid's columns) and its key."""

    index: int
    params: dict[str, Any]
    key: str


@dataclass
class Grid:
    path: Path
    text: str
    base: dict[str, Any]
    axes: list[Axis]
    lines: dict[tuple[str, str], int] = field(repr=False)
    #: (section, key) -> the line where a key is written a second time
    repeats: dict[tuple[str, str], int] = field(default_factory=dict, repr=False)
    _digests: dict[str, str] = field(default_factory=dict, repr=False)
    _systems: dict[str, Any] = field(default_factory=dict, repr=False)

    # ---- where things are ----------------------------------------------------------------

    @property
    def origin(self) -> str:
        return str(self.path)

    def line(self, section: str, key: str) -> int | None:
        """The line of ``key`` in ``section``, else of the nearest enclosing key or table."""
        k = key
        while True:
            if (section, k) in self.lines:
                return self.lines[(section, k)]
            if not k:
                return None
            k = k.rpartition(".")[0]

    def where(self, section: str, key: str) -> str:
        line = self.line(section, key)
        return f"{self.origin}:{line}" if line is not None else self.origin

    def section_of(self, key: str) -> str:
        """Where ``key`` takes its values: its axis' section, else the top level."""
        for a in self.axes:
            if key in a.keys:
                return a.section
        return ""

    def error(self, key: str, message: str, value: Any = None, *, section: str | None = None) -> GridError:
        sec = self.section_of(key) if section is None else section
        shown = f", value {_shown(value)}" if value is not None else ""
        return GridError(f"{self.where(sec, key)}: key '{key}'{shown}: {message}")

    # ---- values ----------------------------------------------------------------------------

    @property
    def keys(self) -> list[str]:
        """Every parameter key, in the order of the results' columns."""
        out = list(self.base)
        for a in self.axes:
            out.extend(k for k in a.keys if k not in out)
        if "seed" not in out:
            out.append("seed")
        return out

    def values(self, key: str, default: Any = None) -> list[Any]:
        """The distinct values ``key`` takes in the sweep ([default] if it is not set)."""
        for a in self.axes:
            if key in a.keys:
                i = a.keys.index(key)
                seen: list[Any] = []
                for v in a.values:
                    if not any(type(v[i]) is type(s) and v[i] == s for s in seen):
                        seen.append(v[i])
                return seen
        if key in self.base:
            return [self.base[key]]
        return [default]

    def has(self, key: str) -> bool:
        return key in self.base or any(key in a.keys for a in self.axes)

    def file(self, value: str) -> Path:
        """A path as written in the grid file (relative to it)."""
        p = Path(value).expanduser()
        return p if p.is_absolute() else self.path.parent / p

    def ref(self, value: str) -> str:
        """A profile, host or engine: a built-in name, or a TOML path relative to the grid."""
        return str(self.file(value)) if value.endswith(".toml") else value

    # ---- runs ------------------------------------------------------------------------------

    @property
    def size(self) -> int:
        """The number of runs, known without making them: the product of the axes' lengths."""
        return math.prod(len(a.values) for a in self.axes)

    def shape(self) -> str:
        """The axes' lengths, for people: ``10 seed x 3 job.iodepth``."""
        return " x ".join(f"{len(a.values)} {a.keys[0] if len(a.keys) == 1 else a.section}" for a in self.axes)

    def iter_runs(self) -> Iterator[Run]:
        """The runs one at a time, in order (a large grid need not be held whole)."""
        keys = self.keys
        for i, combo in enumerate(itertools.product(*(a.values for a in self.axes))):
            params = dict(self.base)
            for a, values in zip(self.axes, combo):
                params.update(zip(a.keys, values))
            params.setdefault("seed", 0)
            params = {k: params[k] for k in keys}
            yield Run(i, params, self._run_key(params))

    @cached_property
    def runs(self) -> list[Run]:
        return list(self.iter_runs())

    def _run_key(self, params: dict[str, Any]) -> str:
        files = {}
        for k in ("job", "system", "profile", "host", "raid.engine"):
            v = params.get(k)
            if isinstance(v, str) and (k in ("job", "system") or v.endswith(".toml")):
                files[k] = self._digest(self.file(v))
        text = json.dumps({"params": params, "files": files}, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()[:24]

    def _digest(self, path: Path) -> str:
        key = str(path)
        if key not in self._digests:
            try:
                self._digests[key] = hashlib.sha256(path.read_bytes()).hexdigest()
            except OSError:
                self._digests[key] = "missing"
        return self._digests[key]

    def spec(self, run: Run):
        """The run's :class:`~ssdlab.api.RunSpec` (built here, in the calling process)."""
        from .. import api

        p = run.params
        sets = _prefixed(p, "profile_set.")
        env = _prefixed(p, "env.")
        host_set = {k: option_text(v) for k, v in p.items() if k.startswith(("iosched.", "queue."))}
        host_set.update(_prefixed(p, "host_set."))
        profile = self.ref(p.get("profile", api.DEFAULT_PROFILE))
        return api.build(self.file(p["job"]), profile=profile, system=self._system(p, profile, sets),
                         host=self.ref(p["host"]) if "host" in p else None, seed=p["seed"],
                         overrides=_prefixed(p, "job."), env={**os.environ, **env} if env else None,
                         precondition=p.get("precondition"), scale=p.get("scale"), profile_set=sets or None,
                         until=p.get("until", "jobs"), scheduler=p.get("scheduler"), host_set=host_set or None)

    def _system(self, p: dict[str, Any], profile: str, sets: dict[str, str]):
        """The run's system, made once for all the runs that share it (loading a profile
        is most of the cost of building a spec)."""
        from ..system import load_system, raid, single

        keys = [k for k in p if k in ("system", "scale", "precondition") or k.startswith(("raid.", "profile_set."))]
        cache_key = json.dumps([profile, [(k, p[k]) for k in keys]])
        system = self._systems.get(cache_key)
        if system is None:
            scale, precondition = p.get("scale"), p.get("precondition")
            if "raid.level" in p:
                system = raid(profile, p["raid.level"], p["raid.drives"], chunk=p.get("raid.chunk", "512k"),
                              engine=self.ref(p.get("raid.engine", "md")), spares=p.get("raid.spares", 0),
                              profile_set=sets or None, scale=scale, precondition=precondition,
                              engine_set=_prefixed(p, "raid.engine_set.") or None)
            elif "system" in p:
                system = load_system(self.file(p["system"]), scale=scale, precondition=precondition,
                                     profile_set=sets or None)
            else:
                system = single(profile, profile_set=sets or None, scale=scale, precondition=precondition)
            self._systems[cache_key] = system
        return system


def _prefixed(params: dict[str, Any], prefix: str) -> dict[str, str]:
    return {k[len(prefix):]: option_text(v) for k, v in params.items() if k.startswith(prefix)}


# ---- reading ---------------------------------------------------------------------------------


def load_grid(path: str | os.PathLike[str]) -> Grid:
    """Read, expand and check a grid file. Raises :class:`GridError` naming file:line."""
    p = Path(path)
    if p.is_dir():
        raise GridError(f"{p}: is a directory, not a grid file")
    if not p.is_file():
        raise GridError(f"{p}: no such grid file")
    from ..arguments import InputFileError, read_toml

    try:
        text, data = read_toml(p)
    except InputFileError as e:
        raise GridError(str(e)) from None
    repeats: dict[tuple[str, str], int] = {}
    lines = key_lines(text, repeats)
    g = Grid(p, text, {}, [], lines, repeats)

    grid_t = data.pop("grid", {})
    zip_t = data.pop("zip", [])
    if not isinstance(grid_t, dict):
        raise GridError(f"{g.where('', 'grid')}: 'grid' must be a table ([grid]) of lists")
    if isinstance(zip_t, dict):
        zip_t = [zip_t]
    if not isinstance(zip_t, list) or not all(isinstance(z, dict) for z in zip_t):
        raise GridError(f"{g.where('', 'zip')}: 'zip' must be a table ([zip]) or tables ([[zip]]) of lists")

    for key, value in _flatten(g, "", data):
        if isinstance(value, list):
            raise g.error(key, "a list at the top level; to sweep it, put it under [grid] or [zip]", section="")
        g.base[key] = value

    taken: dict[str, str] = {}
    for key, value in _flatten(g, "grid", grid_t):
        values = value if isinstance(value, list) else [value]
        if not values:
            raise g.error(key, "an empty list: give at least one value", section="grid")
        for v in values:
            _check_type(g, "grid", key, v)
        taken[key] = "grid"
        g.axes.append(Axis("grid", (key,), tuple((v,) for v in values)))

    for n, z in enumerate(zip_t):
        section = f"zip.{n}"
        items = list(_flatten(g, section, z))
        if not items:
            raise GridError(f"{g.where(section, '')}: an empty [zip] group")
        length = None
        for key, value in items:
            if key in taken:
                other = "[grid]" if taken[key] == "grid" else "another [zip] group"
                raise g.error(key, f"already swept in {other} (line {g.line(taken[key], key)})", section=section)
            if not isinstance(value, list) or not value:
                raise g.error(key, "in a [zip] group every key is a non-empty list; the lists advance together",
                              section=section)
            if length is not None and len(value) != length:
                first = items[0][0]
                raise g.error(key, f"{len(value)} values, but '{first}' has {length}: the lists of a "
                                   "[zip] group advance together, so they must be as long", section=section)
            length = len(value)
            for v in value:
                _check_type(g, section, key, v)
            taken[key] = section
        keys = tuple(k for k, _ in items)
        g.axes.append(Axis(section, keys, tuple(zip(*(v for _, v in items)))))

    for key, value in g.base.items():
        _check_type(g, "", key, value)
    if g.size > MAX_RUNS:
        raise GridError(f"{g.origin}: {g.size:,} runs ({g.shape()}), more than a sweep takes ({MAX_RUNS:,}): "
                        "split the grid into sweeps of fewer runs")
    _check_combinations(g)
    for key in g.keys:
        if g.has(key):
            for value in g.values(key):
                problem = _check_value(g, key, value)
                if problem:
                    raise g.error(key, problem, value)
    return g


def _flatten(g: Grid, section: str, table: dict[str, Any], prefix: str = ""):
    """(dotted key, value) of a table, nested tables joined with dots; unknown keys and keys
    written twice (quoted and nested) are errors."""
    seen: set[str] = set()

    def walk(t: dict[str, Any], pre: str):
        for k, v in t.items():
            key = f"{pre}{k}"
            if isinstance(v, dict):
                yield from walk(v, key + ".")
                continue
            if key in seen:
                again = g.repeats.get((section, key))
                where = f"{g.origin}:{again}" if again else g.where(section, key)
                raise GridError(f"{where}: key '{key}': written twice (first on line {g.line(section, key)})")
            seen.add(key)
            if section == "" and key in _TABLES:
                raise g.error(key, f"'{key}' must be a table ([{key}])", section=section)
            problem = _key_problem(key)
            if problem:
                raise GridError(f"{g.where(section, key)}: unknown key '{key}' {problem.removeprefix('unknown key ')}"
                                if problem.startswith("unknown key") else
                                f"{g.where(section, key)}: key '{key}': {problem}")
            yield key, v

    yield from walk(table, prefix)


def _check_type(g: Grid, section: str, key: str, value: Any) -> None:
    types, said = KEYS.get(key, (_SCALAR, "a string, number or boolean"))
    ok = isinstance(value, types) and not (isinstance(value, bool) and bool not in types)
    if not ok:
        what = "a list" if isinstance(value, list) else "a table" if isinstance(value, dict) else type(value).__name__
        shown = f", value {_shown(value)}" if isinstance(value, (str, int, float, bool)) else ""
        raise GridError(f"{g.where(section, key)}: key '{key}'{shown}: expected {said}, got {what}")


def _check_combinations(g: Grid) -> None:
    """Keys that exclude or need each other."""
    if not g.has("job"):
        raise GridError(f"{g.origin}: missing key 'job' (a fio job file, relative to the grid file)")
    raid_keys = [k for k in g.keys if k in _RAID or k.startswith("raid.engine_set.")]
    if g.has("system"):
        if raid_keys:
            raise g.error(raid_keys[0], "raid.* builds an array of 'profile' drives; with 'system', describe "
                                        "the array in the system file")
        if g.has("profile"):
            raise g.error("profile", "with 'system', the drives' profiles are in the system file (sweep "
                                     "several system files, or their keys with profile_set.*)")
    if raid_keys and not g.has("raid.level"):
        raise g.error(raid_keys[0], "describes a raid.level array; add raid.level")
    if g.has("raid.level") and not g.has("raid.drives"):
        raise g.error("raid.level", "needs raid.drives (the number of drives in the array)")


#: a device larger than any (2^62 bytes): what is wrong with a job on it is wrong on every device
_ANY_SIZE = 1 << 62
#: the most systems of a sweep a job is checked against (the rest are checked as they run)
_SYSTEMS_CHECKED = 16
#: the keys that make a run's system
_SYSTEM_KEYS = ("profile", "system", "scale", "precondition")


def _job_check(g: Grid, job: Any, overrides: dict[str, str] | None = None) -> str | None:
    """What is wrong with ``job`` (with ``overrides``) on every device the sweep runs it on:
    first on a device larger than any (what no device fixes), then on the sweep's own
    systems, wrong only if wrong on all of them (an offset past a 3 GB drive, said of it)."""
    from ..fio import FioJobError, Targets, load_job_file

    if not isinstance(job, str):
        return None
    path = g.file(job)
    if path.is_dir():
        return f"{path}: is a directory, not a job file"
    if not path.is_file():
        return f"no such job file ({path})"
    env = {k[4:]: option_text(g.values(k)[0]) for k in g.keys if k.startswith("env.")}

    def problem(targets) -> str | None:
        try:
            load_job_file(path, targets=targets, overrides=overrides, env={**os.environ, **env} if env else None)
        except (FioJobError, ValueError) as e:
            return str(e).splitlines()[0].removeprefix("<overrides>: ")
        return None

    said = problem(Targets(("sda",), (_ANY_SIZE,), strict=False))
    if said is not None:
        return said
    first = None
    for what, system in _systems(g):
        sizes = tuple(t.capacity if hasattr(t, "level") else t.core["capacity_bytes"] for t in system.targets)
        said = problem(Targets(tuple(system.names), sizes, strict=system.strict, members=system.members))
        if said is None:
            return None
        first = first or f"{said} ({what})"
    return first


def _systems(g: Grid):
    """(what it is, the system) of the first :data:`_SYSTEMS_CHECKED` distinct systems the
    sweep's runs use; a combination that cannot be built is left to the checks of its keys."""
    from ..api import DEFAULT_PROFILE

    keys = [k for k in g.keys if k in _SYSTEM_KEYS or k.startswith(("raid.", "profile_set."))]
    combos = itertools.product(*(g.values(k) for k in keys))
    for combo in itertools.islice(combos, _SYSTEMS_CHECKED):
        params = dict(zip(keys, combo))
        profile = g.ref(params.get("profile", DEFAULT_PROFILE))
        try:
            system = g._system(params, profile, _prefixed(params, "profile_set."))
        except (ValueError, TypeError):
            continue
        what = ", ".join(f"{k} {v}" for k, v in params.items()) or f"profile {profile}"
        yield what, system


def _any(candidates: list[Any], check: Callable[[Any], str | None]) -> str | None:
    """None if ``check`` passes for one of the candidates, else the first one's problem."""
    first = None
    for c in candidates:
        problem = check(c)
        if problem is None:
            return None
        first = first or problem
    return first


def _check_value(g: Grid, key: str, value: Any) -> str | None:
    """What is wrong with ``value`` for ``key`` whatever else the run sets, or None. A value
    that depends on another key (a profile key on the profiles, a tunable on the schedulers)
    is wrong only if it is wrong with every value that key takes in the sweep."""
    from ..arguments import check_seed
    from ..config import ProfileError, load_engine, load_host, load_profile
    from ..config.profile import device_core
    from ..iosched import SCHEDULERS, SchedulerError, check_name, queue_core, scheduler_core, split_host_sets
    from ..system import LEVELS, ArrayEntry, SystemFileError, load_system, parse_precondition

    def first_line(e: Exception) -> str:
        return str(e).splitlines()[0]

    try:
        if key == "job":
            return _job_check(g, value)
        if key.startswith("job."):
            return _any(g.values("job"), lambda j: _job_check(g, j, {key[4:]: option_text(value)}))
        if key == "profile":
            load_profile(g.ref(value))
        elif key == "host":
            load_host(g.ref(value))
        elif key == "system":
            path = g.file(value)
            if not path.is_file():
                return f"no such system file ({path})"
            load_system(path)
        elif key == "seed":
            check_seed(value)
        elif key == "scale":
            if not 0 < value <= 1:
                return "expected a fraction in (0, 1]"
        elif key == "precondition":
            parse_precondition(value)
        elif key == "until":
            if value not in ("jobs", "rebuild"):
                return "expected jobs or rebuild"
        elif key == "scheduler":
            check_name(value)
        elif key == "raid.level":
            if value not in LEVELS:
                return "expected one of 0, 1, 10, 5, 6"
        elif key == "raid.drives":
            if value < 1:
                return "expected at least one drive"
        elif key == "raid.spares":
            if value < 0:
                return "expected a count >= 0"
        elif key == "raid.chunk":
            ArrayEntry._chunk_size(value)
        elif key == "raid.engine":
            load_engine(g.ref(value))
        elif key.startswith("raid.engine_set."):
            sets = {key[len("raid.engine_set."):]: option_text(value)}
            return _any(g.values("raid.engine", "md"), lambda e: _problem(lambda: load_engine(g.ref(e), sets)))
        elif key.startswith("profile_set."):
            sets = {key[len("profile_set."):]: option_text(value)}
            if g.has("system"):
                return _any(g.values("system"), lambda s: _problem(lambda: load_system(g.file(s), profile_set=sets)))
            from ..api import DEFAULT_PROFILE

            return _any(g.values("profile", DEFAULT_PROFILE),
                        lambda p: _problem(lambda: device_core(g.ref(p), sets, 0.001)))
        elif key.startswith("iosched."):
            name = key[len("iosched."):]
            having = [s for s in (g.values("scheduler") if g.has("scheduler") else SCHEDULERS) if name in SCHEDULERS.get(s, {})]
            if not having:
                which = ", ".join(g.values("scheduler")) if g.has("scheduler") else "any scheduler"
                return f"no such tunable in {which}"
            return _any(having, lambda s: _problem(lambda: scheduler_core(s, {name: option_text(value)})))
        elif key.startswith("queue."):
            queue_core({key[len("queue."):]: option_text(value)})
        elif key.startswith("host_set."):
            _, _, host_keys = split_host_sets({key[len("host_set."):]: option_text(value)})
            if not host_keys:
                return "expected a host profile key (mem, memory.<key>, hz, io_overhead...); scheduler and queue keys are iosched.<...> and queue.<...>"
            from ..api import DEFAULT_PROFILE

            hosts = g.values("host") if g.has("host") else \
                [load_profile(g.ref(p))[0].default_host for p in g.values("profile", DEFAULT_PROFILE)]
            return _any(hosts, lambda h: _problem(lambda: load_host(g.ref(h), host_keys)))
    except (ProfileError, SystemFileError, SchedulerError, ValueError, TypeError) as e:
        return first_line(e)
    return None


def _problem(call: Callable[[], Any]) -> str | None:
    try:
        call()
    except (ValueError, TypeError) as e:
        return str(e).splitlines()[0]
    return None
