"""File workloads as the core runs them: file sets, and jobs whose threads run programs of
file operations — from a filebench workload file (``.f``, :mod:`ssdlab.filebench`) or from a
scenario file (``.toml``: the seed procedures, written as file sets and threads).

A scenario file::

    name = "aging"
    description = "seed 000's tooth-missing procedure"
    filesystem = { type = "ext3", block_size = "1k" }   # made on the run's first device

    [[fileset]]
    name = "a"              # 4 KB files a0 … aN
    dir = "/a"
    entries = 50000
    size = "4k"             # or { mean = "16k", shape = 1.5 } (gamma), { min = "1k", max = "8k" }
    prealloc = 0.0          # the share of the files there, written, before the run (on disk, not cached)
    names_cached = false    # true: those files' names and inodes in memory at the start (opened before)
    maps_cached = false     # true: their mapping blocks (indirect, extent) in memory at the start

    [[thread]]
    name = "fill-a"
    instances = 1
    after = []              # threads that finish before this one starts
    ops = [ { op = "create", set = "a", pick = "next" },
            { op = "write_whole", io = "4k" },   # repeat = N: the operation N times over
            { op = "close" } ]
    loops = 0               # 0: until a pick runs out (or the runtime ends)
    runtime = "0"           # 0: no limit (a thread that could never end is refused)
    direct = false          # true: reads and writes with O_DIRECT, past the page cache

    [[thread]]              # a queue runner: takes the files the writers make
    name = "runner"
    serves = ["fill-a"]     # while they run, finding no file means sleep `idle` and rescan;
    idle = "1s"             # once they are done, it means the queue is empty: the thread ends
    ops = [ { op = "list_dir", set = "a" }, { op = "delete", set = "a", pick = "rotor" } ]

A server (``docs/network.md``) adds a ``[network]`` table — the NIC (``nic = { links = 2,
rate = "1g", mode = "802.3ad", xmit_hash_policy = "layer3+4" }``), ``sendfile``,
``send_buffer_windows`` (each connection's socket send buffer in windows of its class; 0, no
buffer, by default), ``costs`` and
``[[network.clients]]`` classes (``name``, ``count``, ``line = "600k"`` bytes a second,
``rtt = "30ms"``, ``window = "64k"``) — and threads that serve a class (``client = "adsl"``, one
instance a client) with ``{ op = "send_whole", io = "64k" }`` after an ``open`` that may pick by
popularity (``pick = { zipf = 0.8 }``; ``scattered = true`` spreads the popular files over the
set instead of taking its first ones; ``ranks = [FIRST, END]`` asks only for those ranks, 0 the
most popular, each as likely as in the whole set's law: what one tier of a site serves);
``send_whole``'s ``midway = true`` starts each thread's first file part-way through, as a server
watched from some moment finds its clients.

``read`` and ``write`` (one call of ``io`` bytes on the open file) go on from the last offset,
or at random with ``random = true``, or by popularity with ``offsets = { zipf = 0.8 }``: the
file taken as slots of ``io`` bytes, Zipf's law over them, ``scattered = true`` to spread the
popular slots over the file (records of one large file asked for by popularity, as a search
index's posting lists at their offsets in its index files).

``sync`` (with a ``set``: its file system) writes every dirty page, waits for it and commits
the journal, as ``cp -a ...; sync`` does. ``mkfs`` (with a ``set``: its file system) times the
making of it: what mke2fs writes, written back and fsynced. Every error names the file, the line and what was expected (:class:`FileWorkError`).
"""

from __future__ import annotations

import dataclasses
import math
import os
from pathlib import Path
from typing import Any

from .arguments import InputFileError, read_toml
from .config.tomlpos import locate, toml_text
from .units import UnitError, parse_size, parse_time_ns, unit_reason
from .workload import BlockSizeDist, JobSpec


def bundled(path: Path) -> Path:
    """``path``, or the scenario shipped with ssdlab of that name when no such file exists and
    the path names no directory (``seed000-webserver.toml``)."""
    if path.exists() or path.parent != Path(".") or path.suffix != ".toml":
        return path
    from importlib import resources

    shipped = resources.files("ssdlab") / "scenarios" / path.name
    return Path(str(shipped)) if shipped.is_file() else path


class FileWorkError(ValueError):
    """A scenario or workload file is wrong: one line naming the file, the line and the key."""


@dataclasses.dataclass
class Thread:
    name: str
    instances: int
    files: dict[str, Any]  # the core's FileAccess
    after: list[str] = dataclasses.field(default_factory=list)
    runtime_ns: int | None = None
    #: a queue runner: the threads whose files it takes, and how long it sleeps when it finds none
    serves: list[str] = dataclasses.field(default_factory=list)
    idle_ns: int = 0
    #: the class of clients (its index in the network's) whose clients it serves, one an instance
    client_class: int | None = None


@dataclasses.dataclass
class FileWork:
    """File sets and threads, ready for the core."""

    name: str
    file_sets: list[dict[str, Any]]
    threads: list[Thread]
    warnings: list[str] = dataclasses.field(default_factory=list)
    #: a file system the work asks for (the scenario's ``filesystem``), the core's spec
    filesystem: dict[str, Any] | None = None
    #: where it came from: "filebench" (with the parsed workload, for its summary) or "scenario"
    kind: str = "scenario"
    source: Any = None
    run_ns: int | None = None
    #: the server's network and its clients (the core's NetworkSpec), when threads send files
    network: dict[str, Any] | None = None
    #: where the file system and each file set were written (``FILE:LINE``), by the core's key
    #: (``filesystem``, ``file_sets.NAME``): the core's errors about them are said there
    places: dict[str, str] = dataclasses.field(default_factory=dict)

    def check_ends(self) -> None:
        """Refuse work that would run for ever: without a run time, a thread ends only when
        its loops are done, a pick runs out (``next``, ``every``, ``open``), an error stops it
        (``stop_on_error``) or, as a queue runner, when the threads it serves are done; a
        thread with none of these never ends, and the run with it."""
        if self.run_ns is not None:
            return
        # Sets some file may be missing from: not all made before the run, or deleted from.
        sparse = {i for i, s in enumerate(self.file_sets) if s.get("prealloc", 0.0) < 1.0}
        sparse |= {o["set"] for t in self.threads for o in t.files["program"]["ops"] if o["op"] == "delete"}
        for t in self.threads:
            if t.runtime_ns is not None or t.serves or program_can_end(t.files["program"], sparse):
                continue
            place = self.places.get(f"threads.{t.name}", self.name)
            if self.kind == "filebench":
                fix = "add a 'run' with its seconds (filebench's 'run 60', or ssdlab run --runtime), or finishoncount to a flowop"
            else:
                fix = "give the scenario a runtime (runtime = \"60s\", or ssdlab run --runtime) or the thread loops (loops = N)"
            raise FileWorkError(f"{place}: thread '{t.name}' never ends: no run time, no loops, and no pick that "
                                f"runs out (next, every, open) or error that stops it; {fix}")

    def jobs(self, seed: int = 0) -> list[JobSpec]:
        """One core job per thread instance; `after` names become job dependencies, `serves`
        names a queue runner's producers."""
        out: list[JobSpec] = []
        first_of: dict[str, list[int]] = {}
        start = 0
        for t in self.threads:
            first_of[t.name] = list(range(start, start + t.instances))
            start += t.instances
        for t in self.threads:
            files = t.files
            if t.serves:
                program = dict(files["program"], producers=[j for s in t.serves for j in first_of[s]],
                               idle_ns=t.idle_ns)
                files = dict(files, program=program)
            for i in range(t.instances):
                if t.client_class is not None:
                    files = dict(files, client={"class": t.client_class, "index": i})
                runtime = t.runtime_ns if t.runtime_ns is not None else self.run_ns
                out.append(JobSpec(
                    name=t.name, clone=i, seed=seed + len(out), rw="write",
                    block_sizes=(BlockSizeDist(split=[(4096, 100.0)]),) * 3, block_align=(4096,) * 3,
                    region_size=1 << 20, io_limit=1 << 62, iodepth=1,
                    runtime_ns=runtime, time_based=runtime is not None,
                    files=files,
                    start_after=[j for a in t.after for j in first_of[a]],
                ))
        return out


def program_can_end(program: dict[str, Any], sparse: set[int]) -> bool:
    """Whether a thread's program (the core's ``FileProgram``) can end by itself: its loops
    are counted, an error stops it, one of its picks runs out (``next`` and ``every`` past
    the set's end, ``open`` with no file open), or, where finding no file ends it
    (``on_no_file``), a create may find every file there or a delete, open or stat none in
    a set of ``sparse`` (one with files missing at times)."""
    if program.get("loops") or program.get("stop_on_error"):
        return True
    ops = program.get("ops", [])
    if any(isinstance(o.get("pick"), dict) and o["pick"].get("kind") in ("next", "every", "open") for o in ops):
        return True
    return program.get("on_no_file", "fail") != "fail" and any(
        o["op"] == "create" or (o["op"] in ("delete", "open", "stat") and o["set"] in sparse) for o in ops)


def load(path: str | os.PathLike[str], target: int = 0) -> FileWork:
    """A filebench workload (``.f``, or a personality's name) or a scenario (``.toml``)."""
    p = Path(path)
    if p.suffix == ".toml":
        return load_scenario(p, target)
    from . import filebench

    w = filebench.load(str(path))
    core = filebench.to_core(w, target_index=target)
    if not core["threads"]:
        # filebench itself would start nothing and wait out the run: nothing to report.
        raise FileWorkError(f"{path}: no thread to run: a workload needs a 'define process' with a 'thread' "
                            "and its flowops")
    threads = [Thread(t["name"], t["instances"], t["files"]) for t in core["threads"]]
    run = core.get("run_seconds")
    places = {f"threads.{t.full_name}": f"{t.path}:{t.line}" for t in w.threads}
    places.update({f"file_sets.{s.name}": f"{s.path}:{s.line}" for s in w.file_sets})
    return FileWork(name=Path(str(path)).stem, file_sets=core["file_sets"], threads=threads,
                    warnings=list(w.warnings), kind="filebench", source=w,
                    run_ns=int(run * 1e9) if run else None, places=places)


#: the longest time the core can count: nanoseconds in a u64
MAX_NS = (1 << 64) - 1
#: the most threads a scenario runs: Linux's PID_MAX_LIMIT on 64-bit (include/linux/threads.h),
#: as each instance is a thread
MAX_THREADS = 4 * 1024 * 1024

_OPS = {"create", "open", "close", "write_whole", "append", "read_whole", "read", "write", "fsync",
        "delete", "stat", "list_dir", "sync", "mkfs", "delay", "send_whole"}
_PICKS = {"random", "rotor", "next", "open"}
#: each operation's keys besides ``op`` (``repeat`` is taken before)
_OP_KEYS = {"create": {"set", "pick"}, "open": {"set", "pick"}, "delete": {"set", "pick"}, "stat": {"set", "pick"},
            "list_dir": {"set"}, "sync": {"set"}, "mkfs": {"set"}, "close": set(), "write_whole": {"io"}, "read_whole": {"io"},
            "append": {"size", "io"}, "read": {"io", "random", "offsets"}, "write": {"io", "random", "offsets"}, "fsync": {"data_only"},
            "delay": {"time", "busy"}, "send_whole": {"io", "midway"}}


def load_scenario(path: Path, target: int = 0) -> FileWork:
    try:
        text, doc = read_toml(path)
    except InputFileError as e:
        raise FileWorkError(str(e)) from None

    def where(*keys: Any) -> str:
        line = locate(text, tuple(keys))
        return f"{path}:{line}" if line else str(path)

    def fail(keys: tuple, message: str) -> FileWorkError:
        return FileWorkError(f"{where(*keys)}: {'.'.join(str(k) for k in keys)}: {message}")

    def size(v: Any, keys: tuple) -> int:
        if v is None:
            raise fail(keys, "missing: expected a size like 4k")
        try:
            return parse_size(v)
        except (UnitError, TypeError, ValueError) as e:
            raise fail(keys, f"{toml_text(v)}: {unit_reason(e, 'expected a size like 4k')}") from None

    def time_ns(v: Any, keys: tuple) -> int:
        try:
            ns = parse_time_ns(v, "s")
        except (UnitError, TypeError, ValueError) as e:
            raise fail(keys, f"{toml_text(v)}: {unit_reason(e, 'expected a time like 10s')}") from None
        if ns > MAX_NS:
            raise fail(keys, f"{toml_text(v)}: expected a time of at most {MAX_NS // 10**9 // 86400:,} days (the core counts "
                       "nanoseconds in 64 bits)")
        return ns

    def tables(k: str) -> list[dict[str, Any]]:
        v = doc.get(k, [])
        if not isinstance(v, list) or not all(isinstance(x, dict) for x in v):
            raise fail((k,), f"expected tables: [[{k}]]")
        return v

    def whole(v: Any) -> bool:
        return isinstance(v, int) and not isinstance(v, bool)

    known_top = {"name", "description", "filesystem", "fileset", "thread", "runtime", "network"}
    for k in doc:
        if k not in known_top:
            raise fail((k,), f"unknown key (expected one of {', '.join(sorted(known_top))})")
    for k in ("name", "description"):
        if k in doc and (not isinstance(doc[k], str) or not doc[k]):
            raise fail((k,), f"{toml_text(doc[k])}: expected a text in quotes")
    # Every thread works in a file set (its first operation's, else the first set).
    for k, what in (("fileset", "a file set"), ("thread", "a thread")):
        if not tables(k):
            raise fail((k,), f"missing: a scenario needs at least {what}, a [[{k}]] table")
    places: dict[str, str] = {}
    #: settings parsed but not modelled, each said once (at its first place)
    warnings: list[str] = []
    sets: list[dict[str, Any]] = []
    index: dict[str, int] = {}
    for i, fs in enumerate(tables("fileset")):
        keys = ("fileset", i)
        for k in fs:
            if k not in {"name", "dir", "entries", "size", "dir_width", "prealloc", "names_cached", "maps_cached"}:
                raise fail(keys + (k,), "unknown key")
        name = fs.get("name")
        if not isinstance(name, str) or not name:
            raise fail(keys + ("name",), "a file set needs a name")
        if name in index:
            raise fail(keys + ("name",), f"'{name}' is defined twice")
        entries = fs.get("entries")
        # The core numbers a set's entries in 32 bits, as ext3 and ext4 number their inodes.
        if not whole(entries) or not 1 <= entries < 1 << 32:
            said = "missing" if entries is None else toml_text(entries)
            raise fail(keys + ("entries",), f"{said}: expected a whole number of files, 1 to {(1 << 32) - 1:,}")
        sz = fs.get("size")
        if isinstance(sz, dict):
            # The core's SizeSpec::validate, said here: a gamma's mean above 0 and its cap at
            # least the mean; a uniform's min at most its max, its alignment above 0.
            gamma = "mean" in sz
            for k in set(sz) - ({"mean", "shape", "max"} if gamma else {"min", "max", "align"}):
                raise fail(keys + ("size", k), "unknown key: expected { mean = SIZE, shape = N, max = SIZE } (gamma) "
                           "or { min = SIZE, max = SIZE, align = SIZE } (uniform)")
            if gamma:
                mean = size(sz["mean"], keys + ("size", "mean"))
                if mean <= 0:
                    raise fail(keys + ("size", "mean"), f"{toml_text(sz['mean'])}: expected a mean above 0")
                shape = sz.get("shape", 1.5)
                if isinstance(shape, bool) or not isinstance(shape, (int, float)) or not 0 < shape < 1e6:
                    raise fail(keys + ("size", "shape"), f"{toml_text(shape)}: expected a positive number (gamma shape)")
                spec = {"kind": "gamma", "mean": mean, "shape": shape, "max": size(sz.get("max", 11 * mean), keys + ("size", "max"))}
                if spec["max"] < mean:
                    raise fail(keys + ("size", "max"), f"{toml_text(sz['max'])}: expected at least the mean, {toml_text(sz['mean'])}")
            else:
                lo, hi = size(sz.get("min"), keys + ("size", "min")), size(sz.get("max"), keys + ("size", "max"))
                spec = {"kind": "uniform", "min": lo, "max": hi, "align": size(sz.get("align", 1), keys + ("size", "align"))}
                if lo > hi:
                    raise fail(keys + ("size", "min"), f"{toml_text(sz['min'])}: expected at most max, {toml_text(sz['max'])}")
                if spec["align"] <= 0:
                    raise fail(keys + ("size", "align"), f"{toml_text(sz['align'])}: expected an alignment above 0")
        else:
            spec = {"kind": "fixed", "bytes": size(sz, keys + ("size",))}
        d = fs.get("dir", f"/{name}")
        if not isinstance(d, str) or not d.startswith("/"):
            raise fail(keys + ("dir",), f"{toml_text(d)}: expected a path from the root, as /dir")
        pre = fs.get("prealloc", 0.0)
        if isinstance(pre, bool) or not isinstance(pre, (int, float)) or not 0 <= pre <= 1:
            raise fail(keys + ("prealloc",), f"{toml_text(pre)}: expected a share from 0 to 1")
        dir_width = fs.get("dir_width", 0)
        if isinstance(dir_width, bool) or not isinstance(dir_width, int) or dir_width < 0:
            raise fail(keys + ("dir_width",), f"{toml_text(dir_width)}: expected a whole number of entries a directory, 0 for one")
        names_cached = fs.get("names_cached", False)
        if not isinstance(names_cached, bool):
            raise fail(keys + ("names_cached",), f"{toml_text(names_cached)}: expected true or false (the laid-out files' names and "
                       "inodes in memory at the start)")
        maps_cached = fs.get("maps_cached", False)
        if not isinstance(maps_cached, bool):
            raise fail(keys + ("maps_cached",), f"{toml_text(maps_cached)}: expected true or false (the laid-out files' "
                       "mapping blocks in memory at the start)")
        # The core lays out round(prealloc × entries) files before the run (as Rust rounds,
        # halves away from zero) and marks only theirs cached: with none, there is nothing.
        for k, given in (("names_cached", names_cached), ("maps_cached", maps_cached)):
            if given and math.floor(pre * entries + 0.5) == 0:
                warnings.append(f"{where(*keys, k)}: fileset.{i}.{k}: no file of the set is laid out before the run "
                                f"(prealloc {pre:g} of {entries:,} entries): nothing to be cached; ignored")
        index[name] = len(sets)
        places[f"file_sets.{name}"] = places[f"file_sets.{i}"] = where(*keys)
        sets.append({"name": name, "target": target, "dir": d, "entries": entries, "size": spec,
                     "dir_width": dir_width, "prealloc": float(pre), **({"names_cached": True} if names_cached else {}),
                     **({"maps_cached": True} if maps_cached else {})})

    def note(keys: tuple, message: str) -> None:
        warnings.append(f"{where(*keys)}: {'.'.join(str(k) for k in keys)}: {message}")

    network = _network(doc["network"], fail, size, time_ns, note) if "network" in doc else None
    class_index = {c["name"]: i for i, c in enumerate(network["clients"])} if network else {}
    threads: list[Thread] = []
    names: set[str] = set()
    total = 0
    for i, th in enumerate(tables("thread")):
        keys = ("thread", i)
        for k in th:
            if k not in {"name", "instances", "after", "ops", "loops", "runtime", "stop_on_error", "serves", "idle",
                         "direct", "client"}:
                raise fail(keys + (k,), "unknown key")
        name = th.get("name")
        if not isinstance(name, str) or not name:
            raise fail(keys + ("name",), "a thread needs a name")
        if name in names:
            raise fail(keys + ("name",), f"'{name}' is defined twice")
        after = th.get("after", [])
        if not isinstance(after, list) or not all(isinstance(a, str) for a in after):
            raise fail(keys + ("after",), f"{toml_text(after)}: expected a list of thread names")
        for a in after:
            if a not in names:
                raise fail(keys + ("after",), f"'{a}' names no thread defined before this one")
        instances = th.get("instances", 1)
        if not whole(instances) or not 1 <= instances <= MAX_THREADS - total:
            raise fail(keys + ("instances",), f"{toml_text(instances)}: expected a whole number of threads, at least 1 and "
                       f"{MAX_THREADS:,} in all (Linux's PID_MAX_LIMIT)")
        total += instances
        loops = th.get("loops", 0)
        if not isinstance(loops, int) or isinstance(loops, bool) or loops < 0:
            raise fail(keys + ("loops",), f"{toml_text(loops)}: expected a whole number, 0 for no limit")
        serves = th.get("serves", [])
        if not isinstance(serves, list) or not all(isinstance(x, str) for x in serves):
            raise fail(keys + ("serves",), f"{toml_text(serves)}: expected a list of thread names")
        idle_ns = time_ns(th.get("idle", "1s"), keys + ("idle",)) if serves else 0
        if serves and idle_ns <= 0:
            raise fail(keys + ("idle",), "a queue runner's idle time must be positive")
        ops = []
        program = th.get("ops", [])
        if not isinstance(program, list):
            raise fail(keys + ("ops",), "expected a list of operations: ops = [ { op = \"create\", ... }, ... ]")
        for j, op in enumerate(program):
            repeat = op.pop("repeat", 1) if isinstance(op, dict) else 1
            if not isinstance(repeat, int) or isinstance(repeat, bool) or not 1 <= repeat <= 10_000:
                raise fail(keys + ("ops", j, "repeat"), f"{toml_text(repeat)}: expected a whole number from 1 to 10000")
            one = _op(op, keys + ("ops", j), index, fail, size, time_ns)
            ranks = one.get("pick", {}).get("ranks")
            if ranks is not None and ranks[1] > sets[one["set"]]["entries"]:
                raise fail(keys + ("ops", j, "pick", "ranks"), f"{toml_text(ranks)}: expected ranks within the set's "
                           f"{sets[one['set']]['entries']:,} files (END at most that)")
            ops += [one] * repeat
        if not ops:
            raise fail(keys + ("ops",), "a thread needs at least one operation")
        first_set = next((o["set"] for o in ops if "set" in o), 0)
        direct = th.get("direct", False)
        if not isinstance(direct, bool):
            raise fail(keys + ("direct",), f"{toml_text(direct)}: expected true (O_DIRECT) or false")
        runtime = th.get("runtime")
        stop_on_error = th.get("stop_on_error", False)
        if not isinstance(stop_on_error, bool):
            raise fail(keys + ("stop_on_error",), f"{toml_text(stop_on_error)}: expected true or false")
        client_class = None
        if "client" in th:
            c = th["client"]
            if network is None or not isinstance(c, str) or c not in class_index:
                known = ", ".join(class_index) or "none: the scenario has no [network]"
                raise fail(keys + ("client",), f"{toml_text(c)} names no class of clients (there are: {known})")
            client_class = class_index[c]
            count = network["clients"][client_class]["count"]
            if instances != count:
                raise fail(keys + ("instances",), f"{instances}: a thread serving class '{c}' has one instance a client, "
                           f"{count}")
        elif any(o["op"] == "send_whole" for o in ops):
            raise fail(keys + ("client",), "a thread that sends files (send_whole) needs its clients: client = \"CLASS\"")
        threads.append(Thread(name, instances, {
            "set": first_set, "direct": direct, "service": "roundrobin", "end_fsync": False, "datasync": False, "unlink": False,
            "program": {"ops": ops, "loops": loops or None, "stop_on_error": stop_on_error}},
            list(after),
            time_ns(runtime, keys + ("runtime",)) if runtime not in (None, 0, "0") else None,
            list(serves), idle_ns, client_class))
        places[f"threads.{name}"] = where(*keys)
        names.add(name)
    for i, t in enumerate(threads):
        for s in t.serves:
            if s not in names or s == t.name:
                raise fail(("thread", i, "serves"), f"'{s}' names no other thread of the scenario")
    fs_spec = None
    if "filesystem" in doc:
        f = doc["filesystem"]
        keys = ("filesystem",)
        if not isinstance(f, dict) or f.get("type") not in ("ext3", "ext4"):
            raise fail(keys + ("type",), "expected type = \"ext3\" or \"ext4\"")
        fs_spec = filesystem_spec(f, lambda k, m: fail(keys + (k,), m))
        places["filesystem"] = where(*keys)
    # As a thread's: unsaid or 0, no limit.
    run = doc.get("runtime")
    return FileWork(name=str(doc.get("name", path.stem)), file_sets=sets, threads=threads, filesystem=fs_spec,
                    kind="scenario", source=doc, run_ns=time_ns(run, ("runtime",)) if run not in (None, 0, "0") else None,
                    network=network, places=places, warnings=warnings)


def _op(op: Any, keys: tuple, index: dict[str, int], fail, size, time_ns) -> dict[str, Any]:
    if not isinstance(op, dict) or not isinstance(op.get("op"), str) or op["op"] not in _OPS:
        said = toml_text(op.get("op")) if isinstance(op, dict) and "op" in op else "missing" if isinstance(op, dict) else toml_text(op)
        raise fail(keys + ("op",), f"{said}: expected an operation, one of {', '.join(sorted(_OPS))}")
    kind = op["op"]
    out: dict[str, Any] = {"op": kind}
    allowed = {"op"} | _OP_KEYS[kind]
    for k in op:
        if k not in allowed:
            raise fail(keys + (k,), f"not a key of '{kind}' (it takes: {', '.join(sorted(allowed - {'op'})) or 'none'})")

    def flag(k: str) -> bool:
        v = op.get(k, False)
        if not isinstance(v, bool):
            raise fail(keys + (k,), f"{toml_text(v)}: expected true or false")
        return v

    def set_of() -> int:
        s = op.get("set")
        if not isinstance(s, str) or s not in index:
            raise fail(keys + ("set",), f"{toml_text(s)} names no file set (there are: {', '.join(index) or 'none'})")
        return index[s]

    def pick() -> dict[str, Any]:
        p = op.get("pick", "random")
        if isinstance(p, dict) and "zipf" in p:
            s = p["zipf"]
            if isinstance(s, bool) or not isinstance(s, (int, float)) or not 0 < s < 100:
                raise fail(keys + ("pick", "zipf"), f"{toml_text(s)}: expected Zipf's exponent, a number above 0 (0.8: web downloads)")
            for k in set(p) - {"zipf", "scattered", "ranks"}:
                raise fail(keys + ("pick", k), "unknown key: expected { zipf = S }, with scattered = true or "
                           "ranks = [FIRST, END] if wanted")
            scattered = p.get("scattered", False)
            if not isinstance(scattered, bool):
                raise fail(keys + ("pick", "scattered"), f"{toml_text(scattered)}: expected true (the popular files spread over "
                           "the set) or false (the first files the most popular)")
            ranks = p.get("ranks")
            if ranks is not None and not (isinstance(ranks, list) and len(ranks) == 2
                                          and all(isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in ranks)
                                          and ranks[0] < ranks[1]):
                raise fail(keys + ("pick", "ranks"), f"{toml_text(ranks)}: expected [FIRST, END], whole numbers, FIRST below END "
                           "(0 the most popular rank)")
            return {"kind": "zipf", "s": float(s), **({"scattered": True} if scattered else {}),
                    **({"ranks": list(ranks)} if ranks is not None else {})}
        if isinstance(p, dict):
            if set(p) != {"every", "first"} or not all(isinstance(p[k], int) and not isinstance(p[k], bool)
                                                       and p[k] >= (k == "every") for k in p):
                raise fail(keys + ("pick",), "expected { every = STEP, first = N }, whole numbers, STEP at least 1")
            return {"kind": "every", "first": int(p["first"]), "step": int(p["every"])}
        if not isinstance(p, str) or p not in _PICKS:
            raise fail(keys + ("pick",), f"{toml_text(p)}: expected one of {', '.join(sorted(_PICKS))}, {{ every, first }} or {{ zipf = S }}")
        return {"kind": p}

    def io_size(default: str) -> int:
        n = size(op.get("io", default), keys + ("io",))
        if n <= 0:
            raise fail(keys + ("io",), f"{toml_text(op['io'])}: expected the bytes of a call, above 0")
        return n

    if kind in ("create", "open", "delete", "stat"):
        out.update(set=set_of(), pick=pick())
    elif kind in ("list_dir", "sync", "mkfs"):
        out["set"] = set_of()
    elif kind in ("write_whole", "read_whole", "send_whole"):
        out["io_bytes"] = io_size("1m")
        if kind == "send_whole" and flag("midway"):
            out["midway"] = True
    elif kind == "append":
        out.update(size={"kind": "fixed", "bytes": size(op.get("size"), keys + ("size",))},
                   io_bytes=io_size("1m"))
    elif kind in ("read", "write"):
        out.update(io_bytes=io_size("4k"), random=flag("random"))
        if "offsets" in op:
            # Offsets by popularity over the file's io-sized slots (fio's random_distribution=zipf).
            o = op["offsets"]
            s = o.get("zipf") if isinstance(o, dict) else None
            if (not isinstance(o, dict) or set(o) - {"zipf", "scattered"} or isinstance(s, bool)
                    or not isinstance(s, (int, float)) or not 0 < s < 100 or not isinstance(o.get("scattered", False), bool)):
                raise fail(keys + ("offsets",), f"{toml_text(o)}: expected {{ zipf = S }} (S above 0) with scattered = true "
                           "or false (the popular slots spread over the file or at its start)")
            out["zipf"] = {"s": float(s), **({"scattered": True} if o.get("scattered") else {})}
    elif kind == "fsync":
        out["data_only"] = flag("data_only")
    elif kind == "delay":
        out.update(ns=time_ns(op.get("time"), keys + ("time",)), busy=flag("busy"))
    return out


def filesystem_spec(f: dict[str, Any], fail) -> dict[str, Any]:
    """The core's FileSystemSpec from a table (``type``, ``era``, ``block_size``, ``inodes``,
    ``inode_ratio``, ``journal_blocks``, ``lazy_itable_init``, ``commit``, ``barriers``,
    ``data``: ordered or writeback, ``size``: a partition of that size at the device's
    start). ``barriers`` unsaid is the kernel's default: off for ext3 on a 2008 kernel, on
    otherwise."""
    known = {"type", "era", "block_size", "inodes", "inode_ratio", "journal_blocks", "lazy_itable_init", "commit",
             "barriers", "data", "size"}
    for k in f:
        if k not in known:
            raise fail(k, f"unknown key (expected one of {', '.join(sorted(known))})")
    era = f.get("era")
    if era not in (None, "2008", "today"):
        raise fail("era", f"{toml_text(era)}: expected \"2008\" or \"today\"")

    def opt_size(k: str) -> int | None:
        if k not in f:
            return None
        try:
            return parse_size(f[k])
        except (UnitError, TypeError, ValueError) as e:
            raise fail(k, f"{toml_text(f[k])}: {unit_reason(e)}") from None

    if opt_size("size") == 0:
        raise fail("size", f"{toml_text(f['size'])}: expected the partition's size, above 0")
    bs = opt_size("block_size")
    if bs is not None and bs not in (1024, 2048, 4096):
        raise fail("block_size", f"{bs}: expected 1k, 2k or 4k")
    commit = f.get("commit", "5s")
    try:
        commit_ns = parse_time_ns(commit, "s")
    except (UnitError, TypeError, ValueError) as e:
        raise fail("commit", f"{toml_text(commit)}: {unit_reason(e)}") from None
    for k in ("inodes", "journal_blocks"):
        v = f.get(k)
        if v is not None and (not isinstance(v, int) or isinstance(v, bool) or v < 1):
            raise fail(k, f"{toml_text(v)}: expected a whole number, at least 1")
    for k in ("lazy_itable_init", "barriers"):
        if k in f and not isinstance(f[k], bool):
            raise fail(k, f"{toml_text(f[k])}: expected true or false")
    data = f.get("data", "ordered")
    if data not in ("ordered", "writeback"):
        raise fail("data", f"{toml_text(data)}: expected \"ordered\" or \"writeback\" (data=journal is not modelled)")
    return {"type": f["type"], "era": era, "block_size": bs, "inode_count": f.get("inodes"),
            "inode_ratio": opt_size("inode_ratio"), "journal_blocks": f.get("journal_blocks"),
            "lazy_itable_init": f.get("lazy_itable_init"), "commit_interval_ns": commit_ns,
            "barriers": f.get("barriers"), "data_mode": data, "size_bytes": opt_size("size")}


#: the most ports a server's bond has here (assumed: far past any server's; a bound keeps the
#: core's per-port state small)
MAX_LINKS = 64
_BOND_MODES = ("balance-rr", "active-backup", "balance-xor", "802.3ad")
_HASHES = ("layer2", "layer2+3", "layer3+4")


def _network(n: Any, fail, size, time_ns, note) -> dict[str, Any]:
    """The core's NetworkSpec from a scenario's ``[network]``: the server's ports (``nic``),
    how it sends (``sendfile``, ``costs``) and its ``[[network.clients]]``."""
    if not isinstance(n, dict):
        raise fail(("network",), "expected a table: [network]")
    for k in n:
        if k not in {"nic", "sendfile", "send_buffer_windows", "costs", "clients"}:
            raise fail(("network", k), "unknown key (expected nic, sendfile, send_buffer_windows, costs, clients)")
    nic = n.get("nic")
    if not isinstance(nic, dict):
        raise fail(("network", "nic"), "expected nic = { links = N, rate = \"1g\", mode = \"802.3ad\", ... }")
    for k in nic:
        if k not in {"links", "rate", "mode", "xmit_hash_policy", "hash_formula", "mtu"}:
            raise fail(("network", "nic", k), "unknown key (expected links, rate, mode, xmit_hash_policy, hash_formula, mtu)")
    links = nic.get("links", 1)
    if isinstance(links, bool) or not isinstance(links, int) or not 1 <= links <= MAX_LINKS:
        raise fail(("network", "nic", "links"), f"{toml_text(links)}: expected a whole number of ports, 1 to {MAX_LINKS}")
    rate = nic.get("rate")
    rates = {"100m": 100_000_000, "1g": 1_000_000_000, "10g": 10_000_000_000, "25g": 25_000_000_000,
             "40g": 40_000_000_000, "100g": 100_000_000_000}
    if not isinstance(rate, str) or rate not in rates:
        raise fail(("network", "nic", "rate"), f"{toml_text(rate)}: expected a port's line rate, one of {', '.join(rates)}")
    mode = nic.get("mode", "802.3ad" if links > 1 else "active-backup")
    if mode not in _BOND_MODES:
        raise fail(("network", "nic", "mode"), f"{toml_text(mode)}: expected one of {', '.join(_BOND_MODES)}")
    if mode == "802.3ad" and links < 2:
        raise fail(("network", "nic", "links"), "802.3ad aggregates two or more ports; one port needs no mode")
    policy = nic.get("xmit_hash_policy", "layer2")
    if policy not in _HASHES:
        raise fail(("network", "nic", "xmit_hash_policy"), f"{toml_text(policy)}: expected one of {', '.join(_HASHES)}")
    formula = nic.get("hash_formula", "linux-6")
    if formula not in ("linux-6", "linux-2.6"):
        raise fail(("network", "nic", "hash_formula"), f"{toml_text(formula)}: expected \"linux-6\" or \"linux-2.6\"")
    given = [k for k in ("xmit_hash_policy", "hash_formula") if k in nic]
    if given and mode in ("balance-rr", "active-backup"):
        # Linux's bonding takes the policy in any mode and hashes in balance-xor and 802.3ad
        # only (Documentation/networking/bonding.rst, xmit_hash_policy); so does the model.
        note(("network", "nic", given[0]), f"{mode} sends without hashing (the policy is balance-xor's and 802.3ad's); "
             f"{' and '.join(given)} {'is' if len(given) == 1 else 'are'} ignored")
    mtu = nic.get("mtu", 1500)
    if isinstance(mtu, bool) or not isinstance(mtu, int) or not 68 <= mtu <= 65535:
        raise fail(("network", "nic", "mtu"), f"{toml_text(mtu)}: expected an MTU in bytes, 68 to 65535")
    link = {"rate_bps": rates[rate], "mtu": mtu}
    sendfile = n.get("sendfile", True)
    if not isinstance(sendfile, bool):
        raise fail(("network", "sendfile"), f"{toml_text(sendfile)}: expected true or false")
    buffer = n.get("send_buffer_windows", 0)
    if isinstance(buffer, bool) or not isinstance(buffer, (int, float)) or not 0 <= buffer <= 1e6:
        raise fail(("network", "send_buffer_windows"), f"{toml_text(buffer)}: expected the socket send buffer in windows of "
                   "the client's class, 0 (none) to 1000000")
    costs = {"per_call_ns": 2_000, "per_packet_ns": 2_500, "copy_ns_per_byte": 0.25}
    costs_given = n.get("costs", {})
    if not isinstance(costs_given, dict):
        raise fail(("network", "costs"), "expected a table: costs = { per_call = \"2us\", per_packet = \"2.5us\", "
                   "copy_ns_per_byte = 0.25 }")
    for k, v in costs_given.items():
        keys = ("network", "costs", k)
        if k in ("per_call", "per_packet"):
            costs[f"{k}_ns"] = time_ns(v, keys)
        elif k == "copy_ns_per_byte":
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v < float("inf"):
                raise fail(keys, f"{toml_text(v)}: expected nanoseconds per byte, 0 or more")
            costs[k] = float(v)
        else:
            raise fail(keys, "unknown key (expected per_call, per_packet, copy_ns_per_byte)")
    clients = []
    raw = n.get("clients", [])
    if not isinstance(raw, list) or not all(isinstance(c, dict) for c in raw):
        raise fail(("network", "clients"), "expected tables: [[network.clients]]")
    for i, c in enumerate(raw):
        keys = ("network", "clients", i)
        for k in c:
            if k not in {"name", "count", "line", "rtt", "window"}:
                raise fail(keys + (k,), "unknown key (expected name, count, line, rtt, window)")
        name = c.get("name")
        if not isinstance(name, str) or not name:
            raise fail(keys + ("name",), "a class of clients needs a name")
        if any(o["name"] == name for o in clients):
            raise fail(keys + ("name",), f"'{name}' is defined twice")
        count = c.get("count")
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise fail(keys + ("count",), f"{toml_text(count)}: expected a whole number of clients, at least 1")
        line = size(c.get("line"), keys + ("line",))
        if line <= 0:
            raise fail(keys + ("line",), f"{toml_text(c.get('line'))}: a line's rate (bytes a second) must be positive")
        window = size(c.get("window", "64k"), keys + ("window",))
        if window <= 0:
            raise fail(keys + ("window",), "TCP's window must be positive")
        clients.append({"name": name, "count": count, "line_bytes_per_s": float(line),
                        "rtt_ns": time_ns(c.get("rtt", "20ms"), keys + ("rtt",)), "window_bytes": window})
    if not clients:
        raise fail(("network", "clients"), "a server's network needs at least one [[network.clients]]")
    return {"nic": {"mode": mode, "xmit_hash_policy": policy, "hash_formula": formula, "links": [link] * links},
            "sendfile": sendfile, "send_buffer_windows": float(buffer), "costs": costs, "clients": clients}
