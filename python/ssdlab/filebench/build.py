"""A parsed workload file, its variables bound, turned into file sets and per-thread programs
of the core's file operations.

How each flowop becomes core operations (filebench's behaviour from its ``flowop_library.c``
and ``fileset.c``, 1.5):

* a thread has numbered file descriptors (``fd=``, 0 when not given); the core keeps one open
  file per thread. ``createfile``/``openfile`` open a file of their fileset on their fd. When
  one opens while another fd is open, the ``closefile`` of that other fd that comes later in
  the thread (if any) is issued first, with a warning; a flowop that then works on the left fd
  is an error;
* ``read``, ``write``, ``readwholefile``, ``writewholefile``, ``appendfile``,
  ``appendfilerand`` and ``aiowrite`` work on their fd's open file; when it is not open and the
  flowop names a fileset, filebench opens a file itself and keeps it open (with ``opennext``,
  the next file at each call): here an ``open`` of a random file of the set comes before it, on
  each pass (each call with ``opennext``), counted with the flowop as filebench counts it;
* ``dsync`` (filebench opens with O_SYNC) adds an ``fsync`` after each write to that file, its
  time counted in the write's; ``directio`` makes the thread's file I/O O_DIRECT (the core's
  flag is per thread);
* ``iters=N`` repeats the flowop N times in the program;
* a fileset's ``readonly`` or ``writeonly`` is the mode filebench opens its files with: a
  flowop that writes to a readonly set (reads a writeonly one) is refused, as its call would
  fail and stop filebench's run; otherwise the mode changes nothing.

What cannot be modelled gives a warning (ignored, effect stated) or an error (the meaning
would change), each naming the file and line.
"""

from __future__ import annotations

import math
import posixpath
from dataclasses import dataclass, field
from typing import Literal

from .errors import FilebenchError, where
from .gammatail import cap_multiple
from .parser import Attr, FilesetStmt, FlowopStmt, Script, ThreadStmt, ProcessStmt, Value

#: filebench's default shape of its file-size gamma distribution: ``fs_sizegamma`` is 1500
#: (gamma × 1000) in ``fileset_define()`` of filebench 1.4.9 (fileset.c), and the
#: "Pre-defined personalities" page of its wiki: "a gamma distribution of 1.5".
DEFAULT_SIZE_GAMMA = 1500
#: filebench's default run time when ``run`` gives none (TIMED_RUNTIME_DEFAULT, parser_gram.y).
DEFAULT_RUN_SECONDS = 60
#: ``hog value=N`` loops N times over one store to memory; ssdlab counts 1 ns of CPU a loop.
HOG_NS_PER_LOOP = 1
#: largest program a thread may have after ``iters`` are unrolled
MAX_PROGRAM_OPS = 100_000

#: flowop type -> (filebench's statistics class, read/write attribute): ``flowoplib_funcs`` in
#: flowop_library.c and the aio table of fb_localfs.c. The class decides what the IO Summary
#: counts; read/write the rd/wr counts.
FLOWOPS: dict[str, tuple[str, str | None]] = {
    "write": ("io", "write"), "read": ("io", "read"),
    "block": ("sync", None), "wakeup": ("sync", None), "semblock": ("sync", None), "sempost": ("sync", None),
    "hog": ("other", None), "delay": ("other", None), "eventlimit": ("other", None), "bwlimit": ("other", None),
    "iopslimit": ("other", None), "opslimit": ("other", None), "finishoncount": ("other", None),
    "finishonbytes": ("other", None),
    "openfile": ("io", None), "createfile": ("io", None), "closefile": ("io", None), "makedir": ("io", None),
    "removedir": ("io", None), "listdir": ("io", None), "fsync": ("io", None), "fsyncset": ("io", None),
    "statfile": ("io", None), "readwholefile": ("io", "read"), "appendfile": ("io", "write"),
    "appendfilerand": ("io", "write"), "deletefile": ("io", None), "writewholefile": ("io", "write"),
    "print": ("other", None), "testrandvar": ("other", None),
    "aiowrite": ("aio", "write"), "aiowait": ("aio", None),
}

_LIMITS = {"eventlimit", "bwlimit", "iopslimit", "opslimit"}
_WRITES = {"write", "aiowrite", "writewholefile", "appendfile", "appendfilerand"}


@dataclass
class FileSet:
    name: str
    dir: str
    entries: int
    size: dict  # the core's SizeSpec
    dir_width: int
    prealloc: float  # share of entries, 0..1
    line: int
    path: str
    is_file: bool = False
    #: filebench's open mode for the set's files: "readonly" (O_RDONLY), "writeonly" (O_WRONLY)
    #: or None (O_RDWR); flowoplib_openfile_common and flowoplib_createfile
    mode: str | None = None

    def core(self, target: int) -> dict:
        return {"name": self.name, "target": target, "dir": self.dir, "entries": self.entries,
                "size": dict(self.size), "dir_width": self.dir_width, "prealloc": self.prealloc}


@dataclass
class Flowop:
    kind: str
    name: str
    line: int
    path: str
    stat_class: str  # "io", "aio", "sync", "other"
    rw: str | None  # "read", "write" or None


@dataclass
class Thread:
    process: str
    name: str
    process_instances: int
    thread_instances: int
    flowops: list[Flowop]
    #: the core's program (FileOp dicts) and, aligned with it, which flowop each op is for
    #: and whether it counts as one of that flowop's operations (False: its time and bytes
    #: join the flowop's, as an fsync added for dsync)
    ops: list[dict]
    op_flowop: list[tuple[int, bool]]
    set: int
    direct: bool
    loops: int | None
    line: int
    path: str

    @property
    def full_name(self) -> str:
        return f"{self.process}.{self.name}"

    @property
    def instances(self) -> int:
        return self.process_instances * self.thread_instances

    def core(self, on_no_file: str = "fail") -> dict:
        return {"set": self.set, "direct": self.direct, "service": "roundrobin", "end_fsync": False,
                "unlink": False, "program": {"ops": [dict(o) for o in self.ops], "loops": self.loops,
                                             "on_no_file": on_no_file}}


@dataclass
class Workload:
    """A filebench workload read for the core: its file sets, its threads (each with its
    program), how long it runs, and every warning."""

    path: str
    file_sets: list[FileSet]
    threads: list[Thread]
    run_seconds: float | None
    quit: Literal["timeout", "firstdone", "alldone"]
    warnings: list[str] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)
    variables: dict[str, object] = field(default_factory=dict)


# ==== values ================================================================================

class _Resolver:
    def __init__(self, script: Script) -> None:
        self.vars = script.variables

    def value(self, v: Value, path: str, line: int, what: str) -> Value:
        seen = set()
        while v.kind == "var":
            if v.v in seen:
                raise FilebenchError(f"{what}: ${v.v} refers to itself", path=path, line=line)
            seen.add(v.v)
            if v.v not in self.vars:
                raise FilebenchError(f"{what}: variable ${v.v} is not set", path=path, line=line)
            v = self.vars[v.v]
        return v

    def int(self, a: Attr | None, path: str, what: str, default: int | None = None, minimum: int = 0) -> int:
        if a is None:
            if default is None:
                raise FilebenchError(f"{what} is required", path=path)
            return default
        if a.value is None:
            raise FilebenchError(f"{what}: expected {a.name}=<number>", path=path, line=a.line)
        v = self.value(a.value, path, a.line, what)
        if v.kind == "int":
            n = int(v.v)
        elif v.kind == "bool":
            n = int(bool(v.v))
        elif v.kind == "dist":
            raise FilebenchError(f"{what}: a random variable is not modelled here (only as a fileset's size)",
                                 path=path, line=a.line)
        else:
            raise FilebenchError(f"{what}: expected a whole number, found '{v.v}'", path=path, line=a.line)
        if n < minimum:
            raise FilebenchError(f"{what}: {n} is below {minimum}", path=path, line=a.line)
        return n

    def bool(self, a: Attr | None, path: str, what: str, default: bool = False) -> bool:
        if a is None:
            return default
        if a.value is None:
            return True
        v = self.value(a.value, path, a.line, what)
        if v.kind in ("bool", "int"):
            return bool(v.v)
        raise FilebenchError(f"{what}: expected true, false or a number, found '{v.v}'", path=path, line=a.line)

    def str(self, a: Attr | None, path: str, what: str) -> str | None:
        if a is None:
            return None
        if a.value is None:
            raise FilebenchError(f"{what}: expected {a.name}=<name>", path=path, line=a.line)
        v = self.value(a.value, path, a.line, what)
        if v.kind == "dist":
            raise FilebenchError(f"{what}: expected a name, found a random variable", path=path, line=a.line)
        return str(v.v).lower() if v.kind == "bool" else str(v.v)


# ==== sizes =================================================================================

def gamma_size(mean: float, shape: float, cap: int | None = None) -> dict:
    mean_i = max(1, int(round(mean)))
    limit = cap if cap is not None else mean_i * cap_multiple(shape)
    return {"kind": "gamma", "mean": mean_i, "shape": float(shape), "max": int(limit)}


def _cvar_params(text: str, path: str, line: int) -> dict[str, float]:
    out = {}
    for part in filter(None, text.split(";")):
        key, sep, val = part.partition(":")
        if not sep:
            raise FilebenchError(f"cvar parameters: expected key:value, found '{part}'", path=path, line=line)
        try:
            out[key.strip()] = float(val)
        except ValueError:
            raise FilebenchError(f"cvar parameters: {key}: '{val}' is not a number", path=path, line=line) from None
    return out


def _dist_size(r: _Resolver, d: dict, path: str, line: int, what: str, warn) -> dict:
    attrs: dict[str, Attr] = d["attrs"]
    if d["form"] == "cvar":
        ctype = r.str(attrs.get("type"), path, f"{what}: cvar type")
        if ctype is None:
            raise FilebenchError(f"{what}: cvar(...) needs type=", path=path, line=line)
        params = _cvar_params(r.str(attrs.get("parameters"), path, f"{what}: cvar parameters") or "", path, line)
        for extra in ("min", "round"):
            if extra in attrs:
                raise FilebenchError(f"{what}: cvar {extra}= is not modelled", path=path, line=attrs[extra].line)
        cap = r.int(attrs["max"], path, f"{what}: cvar max") if "max" in attrs else None
        if ctype == "cvar-gamma":
            unknown = set(params) - {"mean", "gamma"}
            if unknown:
                raise FilebenchError(f"{what}: cvar-gamma has no parameter '{sorted(unknown)[0]}'", path=path, line=line)
            mean, shape = params.get("mean", 4096.0), params.get("gamma", 1.5)  # cvar-gamma.c's defaults
            if mean <= 0 or shape <= 0:
                raise FilebenchError(f"{what}: cvar-gamma needs a positive mean and gamma", path=path, line=line)
            if cap is not None and cap < mean:
                raise FilebenchError(f"{what}: cvar max {cap} is below the mean {mean:g}", path=path, line=line)
            return gamma_size(mean, shape, cap)
        if ctype == "cvar-uniform":
            unknown = set(params) - {"lower", "upper"}
            if unknown or "lower" not in params or "upper" not in params:
                raise FilebenchError(f"{what}: cvar-uniform needs parameters lower:..;upper:..", path=path, line=line)
            lo, hi = int(params["lower"]), int(params["upper"])
            if cap is not None:
                hi = min(hi, cap)
            if not 0 <= lo <= hi:
                raise FilebenchError(f"{what}: cvar-uniform needs 0 <= lower <= upper", path=path, line=line)
            return {"kind": "uniform", "min": lo, "max": hi, "align": 1}
        raise FilebenchError(f"{what}: cvar type '{ctype}' is not modelled (cvar-gamma and cvar-uniform are)",
                             path=path, line=line)
    # randvar: filebench's built-in random variables (gamma by default)
    rtype = r.str(attrs.get("type"), path, f"{what}: randvar type") or "gamma"
    if rtype != "gamma" or "randtable" in attrs:
        raise FilebenchError(f"{what}: randvar of type '{rtype}' is not modelled (gamma is)", path=path, line=line)
    for extra in ("min", "round"):
        # rand_gamma_get (fb_random.c) adds min to each draw and rounds it to a multiple of round
        if r.int(attrs.get(extra), path, f"{what}: randvar {extra}", default=0):
            raise FilebenchError(f"{what}: randvar {extra}= is not modelled", path=path, line=attrs[extra].line)
    for extra in ("seed", "randsrc"):
        # which generator draws (rand48 seeded with seed=, or filebench's own): the law is the same
        if extra in attrs:
            warn(path, attrs[extra].line, f"{what}: randvar {extra}: sizes are drawn from ssdlab's run seed; ignored")
    if "mean" not in attrs:
        raise FilebenchError(f"{what}: randvar needs mean=", path=path, line=line)
    mean = r.int(attrs["mean"], path, f"{what}: randvar mean", minimum=1)
    shape = r.int(attrs.get("gamma"), path, f"{what}: randvar gamma", default=1500, minimum=1) / 1000
    return gamma_size(mean, shape)


def _size(r: _Resolver, a: Attr | None, path: str, what: str, shape: float, fixed: bool, warn) -> dict:
    if a is None:
        n = 1024  # parser_fileset_define_common(): fs_size defaults to 1024
        v = None
    else:
        if a.value is None:
            raise FilebenchError(f"{what}: expected size=<bytes>", path=path, line=a.line)
        v = r.value(a.value, path, a.line, what)
        if v.kind == "dist":
            return _dist_size(r, v.v, path, a.line, what, warn)
        n = r.int(a, path, what)
    if fixed or shape <= 0 or n == 0:
        return {"kind": "fixed", "bytes": n}
    return gamma_size(n, shape)


def size_mean(size: dict) -> float:
    if size["kind"] == "fixed":
        return float(size["bytes"])
    if size["kind"] == "uniform":
        return (size["min"] + size["max"]) / 2
    return float(size["mean"])


# ==== file sets =============================================================================

def _fileset(r: _Resolver, st: FilesetStmt, plain_size: str, warn) -> FileSet:
    a, p = st.attrs, st.path
    kind = "file" if st.is_file else "fileset"
    name = r.str(a.get("name"), p, f"define {kind}: name")
    if not name:
        raise FilebenchError(f"define {kind}: name= is required", path=p, line=st.line)
    what = f"{kind} {name}"
    base = r.str(a.get("path"), p, f"{what}: path")
    if not base:
        raise FilebenchError(f"{what}: path= is required", path=p, line=st.line)
    if not base.startswith("/"):
        warn(p, a["path"].line, f"{what}: path '{base}' is relative; taken from the file system's root")
        base = "/" + base
    base = posixpath.normpath(base)
    size_attr = a.get("size") or a.get("filesize")
    if st.is_file:
        entries = 1
        size = _size(r, size_attr, p, f"{what}: size", 0, fixed=True, warn=warn)
        dir_width = 0
        dirpath = base
    else:
        entries_attr = a.get("entries")
        if entries_attr is None:
            raise FilebenchError(f"{what}: entries= is required (filebench 1.5 makes a fileset of no files "
                                 "without it)", path=p, line=st.line)
        entries = r.int(entries_attr, p, f"{what}: entries", minimum=1)
        if entries >= 1 << 32:
            # The core numbers a set's entries in 32 bits, as ext3 and ext4 number their inodes.
            raise FilebenchError(f"{what}: entries: {entries} is above {(1 << 32) - 1:,}", path=p,
                                 line=entries_attr.line)
        gamma_attr = a.get("filesizegamma") or a.get("sizegamma")
        if gamma_attr is not None:
            shape = r.int(gamma_attr, p, f"{what}: {gamma_attr.name}") / 1000
            fixed = shape <= 0
        else:
            shape, fixed = DEFAULT_SIZE_GAMMA / 1000, plain_size == "fixed"
        size = _size(r, size_attr, p, f"{what}: size", shape, fixed, warn)
        if "dirwidth" not in a:
            raise FilebenchError(f"{what}: dirwidth= is required (filebench: 'Fileset has no directory width')",
                                 path=p, line=st.line)
        width = r.int(a["dirwidth"], p, f"{what}: dirwidth", minimum=1)
        dir_width = width if width < entries else 0
        if width < entries:
            depth = math.log(entries) / math.log(width) if width > 1 else float(entries)
            warn(p, a["dirwidth"].line,
                 f"{what}: filebench spreads its {entries} files over a tree about {depth:.1f} levels deep "
                 f"with directory widths drawn around {width}; here {width} files to a directory, one level "
                 "below the fileset's own")
        if r.int(a.get("leafdirs"), p, f"{what}: leafdirs", default=0):
            raise FilebenchError(f"{what}: leafdirs (directories for makedir/removedir) are not modelled",
                                 path=p, line=a["leafdirs"].line)
        for attr in ("dirdepthrv", "dirgamma"):
            # dirgamma: the gamma of the depth each subdirectory is given (fileset.c's
            # fileset_populate_subdir draws it when no dirdepthrv says)
            if attr in a:
                warn(p, a[attr].line, f"{what}: {attr}: the tree's depth is not modelled; ignored")
        dirpath = posixpath.join(base, name)
    pre = a.get("prealloc")
    if pre is None:
        prealloc = 0.0
    elif pre.value is None:
        prealloc = 1.0
    else:
        v = r.value(pre.value, p, pre.line, f"{what}: prealloc")
        if v.kind == "bool":
            prealloc = 1.0 if v.v else 0.0
        else:
            pct = r.int(pre, p, f"{what}: prealloc")
            if pct > 100:
                raise FilebenchError(f"{what}: prealloc={pct}: expected a percentage, 0 to 100", path=p,
                                     line=pre.line)
            prealloc = pct / 100
    for attr, effect in (("reuse", "the simulated file system starts empty: the fileset is made anew"),
                         ("trusttree", "the simulated file system starts empty: the fileset is made anew"),
                         ("paralloc", "preallocation is not part of the measured run"),
                         ("cached", "preallocated files are not left in the page cache")):
        if r.bool(a.get(attr), p, f"{what}: {attr}"):
            warn(p, a[attr].line, f"{what}: {attr}: {effect}; ignored")
    # The mode the set's files are opened with: readonly before writeonly, as filebench
    # tests them. A call the mode forbids fails (EBADF) and stops filebench's run: refused at
    # its flowop (_Program.check_mode); otherwise the mode changes nothing.
    mode = next((m for m in ("readonly", "writeonly") if r.bool(a.get(m), p, f"{what}: {m}")), None)
    return FileSet(name, dirpath, entries, size, dir_width, prealloc, st.line, p, st.is_file, mode)


# ==== threads ===============================================================================

class _Program:
    """Builds one thread's program from its flowops."""

    def __init__(self, r: _Resolver, thread: str, stmts: list[FlowopStmt], sets: dict[str, int],
                 file_sets: list[FileSet], eventgen_rate: int, warn) -> None:
        self.r, self.thread, self.stmts, self.sets, self.file_sets = r, thread, stmts, sets, file_sets
        self.eventgen_rate = eventgen_rate
        self._warn = warn
        self.ops: list[dict] = []
        self.refs: list[tuple[int, bool]] = []
        self.open_fd: object = None
        self.fd_set: dict[object, int] = {}
        self.fd_sync: dict[object, bool] = {}
        self.left: dict[object, str] = {}  # fds left open when another was opened -> that flowop
        self.moved: set[int] = set()
        self.direct_votes: list[tuple[bool, FlowopStmt]] = []
        self.flowops: list[Flowop] = []
        self.finish: list[tuple[str, int, str | None, FlowopStmt]] = []

    def warn(self, st: FlowopStmt, message: str) -> None:
        self._warn(st.path, st.line, message)

    def err(self, st: FlowopStmt, message: str, line: int | None = None) -> FilebenchError:
        return FilebenchError(message, path=st.path, line=line or st.line)

    def emit(self, op: dict, i: int, counts: bool = True) -> None:
        self.ops.append(op)
        self.refs.append((i, counts))
        if len(self.ops) > MAX_PROGRAM_OPS:
            raise self.err(self.stmts[i], f"thread {self.thread}: more than {MAX_PROGRAM_OPS} operations a pass "
                                          "(iters unrolled)")

    # ---- attributes ----

    def a_int(self, st, name, default=0, minimum=0):
        return self.r.int(st.attrs.get(name), st.path, f"flowop {st.kind} {name}", default=default,
                          minimum=minimum)

    def a_bool(self, st, name):
        return self.r.bool(st.attrs.get(name), st.path, f"flowop {st.kind} {name}")

    def a_set(self, st, required: bool) -> int | None:
        a = st.attrs.get("filesetname") or st.attrs.get("filename")
        name = self.r.str(a, st.path, f"flowop {st.kind} {a.name if a else 'filesetname'}") if a else None
        if name is None:
            if required:
                raise self.err(st, f"flowop {st.kind}: filesetname= is required")
            return None
        if name not in self.sets:
            raise self.err(st, f"flowop {st.kind}: fileset '{name}' is not defined", a.line)
        return self.sets[name]

    # ---- files and descriptors ----

    def switch_to(self, fd, i: int, st: FlowopStmt) -> None:
        """``fd`` is about to be opened: the core's one open file must be free."""
        if self.open_fd is None or self.open_fd == fd:
            return
        old = self.open_fd
        for j in range(i + 1, len(self.stmts)):
            other = self.stmts[j]
            ofd = self._fd(other) if other.kind in ("openfile", "createfile", "closefile") else None
            if other.kind in ("openfile", "createfile") and ofd == old:
                break
            if other.kind == "closefile" and ofd == old and j not in self.moved:
                self.moved.add(j)
                self.emit({"op": "close"}, j)
                self._warn(other.path, other.line,
                           f"closefile {self._name(other)} (fd {old}) is issued before {st.kind} {self._name(st)} "
                           f"opens fd {fd}: the core keeps one file open per thread")
                self.open_fd = None
                return
        self.left[old] = self._name(st)
        self.open_fd = None

    def _fd(self, st: FlowopStmt) -> int:
        return self.a_int(st, "fd", default=0)

    @staticmethod
    def _name(st: FlowopStmt) -> str:
        a = st.attrs.get("name")
        return str(a.value.v) if a is not None and a.value is not None else "?"

    def opened(self, fd, set_i: int, st: FlowopStmt) -> None:
        self.open_fd = fd
        self.fd_set[fd] = set_i
        self.left.pop(fd, None)
        self.fd_sync[fd] = self.a_bool(st, "dsync")
        self.direct_votes.append((self.a_bool(st, "directio"), st))

    def ensure_open(self, i: int, st: FlowopStmt, name: str) -> int:
        """The set of the file this I/O flowop works on, opening one as filebench would."""
        set_i = self.a_set(st, required=False)
        rotate = self.a_bool(st, "opennext") and self._fd(st) == 0
        fd = ("next", i) if rotate else self._fd(st)
        if self.open_fd == fd and not rotate:
            if set_i is not None and self.fd_set.get(fd) != set_i:
                have = self.file_sets[self.fd_set[fd]].name
                raise self.err(st, f"{st.kind} {name}: fd {fd} holds a file of {have}, not of the fileset named "
                                   "(filebench: the names conflict)")
            self._no_effect_at_io(st, name)
            return self.fd_set[fd]
        if fd in self.left and set_i is None:
            raise self.err(st, f"{st.kind} {name}: works on fd {fd}, left open when {self.left[fd]} opened another "
                               "file: the core keeps one file open per thread")
        if set_i is None:
            raise self.err(st, f"{st.kind} {name}: fd {fd} is not open and no filesetname= says which file to "
                               "open (filebench stops the run)")
        self.switch_to(fd, i, st)
        self.emit({"op": "open", "set": set_i, "pick": {"kind": "random"}}, i)
        self.opened(fd, set_i, st)
        how = "each call on the next file (opennext)" if rotate else "keeps it open"
        self.warn(st, f"{st.kind} {name} opens a file of {self.file_sets[set_i].name} itself and {how}; here a "
                      f"file picked at random is opened before it, {'each call' if rotate else 'on each pass'}")
        return set_i

    def check_mode(self, st: FlowopStmt, name: str, set_i: int, write: bool) -> None:
        """Refuse I/O the set's open mode forbids: filebench's call fails with EBADF, and
        the flowop's error stops its run."""
        fs = self.file_sets[set_i]
        if fs.mode == ("readonly" if write else "writeonly"):
            flag, call = ("O_RDONLY", "write") if write else ("O_WRONLY", "read")
            raise self.err(st, f"{st.kind} {name}: fileset {fs.name} is {fs.mode} (filebench opens its files {flag}): "
                               f"the {call} fails there (EBADF) and filebench stops the run")

    def _no_effect_at_io(self, st: FlowopStmt, name: str) -> None:
        for attr in ("dsync", "directio"):
            if self.a_bool(st, attr):
                self.warn(st, f"{st.kind} {name}: {attr} takes effect when a file is opened, and this flowop's "
                              "file is already open; ignored")

    def write_sync(self, i: int) -> None:
        if self.fd_sync.get(self.open_fd):
            self.emit({"op": "fsync", "data_only": False}, i, counts=False)

    # ---- the flowops ----

    def build(self) -> None:
        for i, st in enumerate(self.stmts):
            if st.kind not in FLOWOPS:
                raise self.err(st, f"unknown flowop '{st.kind}'")
            name = self.r.str(st.attrs.get("name"), st.path, f"flowop {st.kind} name")
            if not name:
                raise self.err(st, f"flowop {st.kind} specifies no name")
            stat_class, rw = FLOWOPS[st.kind]
            self.flowops.append(Flowop(st.kind, name, st.line, st.path, stat_class, rw))
            self.check_attrs(st, name)
            iters = self.a_int(st, "iters", default=1)
            for _ in range(iters):
                self.one(i, st, name)

    def check_attrs(self, st: FlowopStmt, name: str) -> None:
        a = st.attrs
        if "indexed" in a:
            raise self.err(st, f"{st.kind} {name}: indexed= (picking files by index) is not modelled",
                           a["indexed"].line)
        if self.a_int(st, "workingset") and st.kind in ("read", "write", "aiowrite"):
            self.warn(st, f"{st.kind} {name}: workingset: offsets cover the whole file; ignored")
        if self.a_bool(st, "noreadahead"):
            self.warn(st, f"{st.kind} {name}: noreadahead: the page cache's read-ahead stays on; ignored")

    def one(self, i: int, st: FlowopStmt, name: str) -> None:
        k = st.kind
        if k in ("createfile", "openfile"):
            set_i = self.a_set(st, required=True)
            fd = self._fd(st)
            if self.open_fd == fd:
                raise self.err(st, f"{k} {name}: fd {fd} is still open (filebench: 'attempted to "
                                   f"{'create' if k == 'createfile' else 'open'} without closing')")
            if k == "openfile" and fd == 0 and self.a_bool(st, "opennext"):
                # flowoplib_fdnum: each call takes the next of the thread's fds, the files
                # opened before staying open
                self.warn(st, f"openfile {name}: opennext: filebench opens a file on a new fd at each call, leaving "
                              "the others open; here one file is open at a time, on its fd; ignored")
            self.switch_to(fd, i, st)
            self.emit({"op": "create" if k == "createfile" else "open", "set": set_i, "pick": {"kind": "random"}}, i)
            self.opened(fd, set_i, st)
        elif k == "closefile":
            fd = self._fd(st)
            if i in self.moved:
                self.moved.discard(i)  # issued earlier; an unrolled iteration would close again
                return
            if self.open_fd != fd:
                raise self.err(st, f"closefile {name}: fd {fd} is not open (filebench: 'attempted to close an "
                                   "already closed fd')")
            self.emit({"op": "close"}, i)
            self.open_fd = None
        elif k in ("read", "write", "aiowrite"):
            iosize = self.a_int(st, "iosize")
            if iosize == 0:
                raise self.err(st, f"{k} {name}: iosize= is required (filebench refuses I/O of 0 bytes)")
            set_i = self.ensure_open(i, st, name)
            self.check_mode(st, name, set_i, write=k != "read")
            size = self.file_sets[set_i].size
            if size["kind"] == "fixed" and self.a_bool(st, "random") and size["bytes"] < iosize:
                raise self.err(st, f"{k} {name}: iosize {iosize} is larger than the files of "
                                   f"{self.file_sets[set_i].name} (filebench: 'file size smaller than IO size')")
            op = "read" if k == "read" else "write"
            self.emit({"op": op, "io_bytes": iosize, "random": self.a_bool(st, "random")}, i)
            if k != "read":
                self.write_sync(i)
            if k == "aiowrite":
                self.warn(st, f"aiowrite {name}: issued as a synchronous write (asynchronous I/O is not "
                              "modelled)")
        elif k in ("readwholefile", "writewholefile"):
            set_i = self.ensure_open(i, st, name)
            self.check_mode(st, name, set_i, write=k == "writewholefile")
            iosize = self.a_int(st, "iosize") or max(1, _max_bytes(self.file_sets[set_i].size))
            self.emit({"op": "read_whole" if k == "readwholefile" else "write_whole", "io_bytes": iosize}, i)
            if k == "writewholefile":
                srcfd = self.a_int(st, "srcfd")
                fd = self._fd(st)
                if srcfd and srcfd != fd:
                    src = self.fd_set.get(srcfd)
                    src_name = self.file_sets[src].name if src is not None else f"fd {srcfd}"
                    self.warn(st, f"writewholefile {name}: srcfd={srcfd}: the file is written to a size drawn "
                                  f"from {self.file_sets[set_i].name}'s sizes, not to the size of {src_name}'s "
                                  "file")
                self.write_sync(i)
        elif k in ("appendfile", "appendfilerand"):
            iosize = self.a_int(st, "iosize")
            if iosize == 0:
                raise self.err(st, f"{k} {name}: iosize= is required (filebench: 'zero iosize')")
            self.check_mode(st, name, self.ensure_open(i, st, name), write=True)
            if k == "appendfile":
                size = {"kind": "fixed", "bytes": iosize}
            else:
                # flowoplib_appendfilerand(): fb_urandom64(&appendsize, iosize, 1) draws 0..iosize-1
                # and skips 0; the core appends at least 1 byte
                size = {"kind": "uniform", "min": 1, "max": max(1, iosize - 1), "align": 1}
            self.emit({"op": "append", "size": size, "io_bytes": iosize}, i)
            self.write_sync(i)
        elif k == "fsync":
            fd = self._fd(st)
            if self.open_fd != fd:
                raise self.err(st, f"fsync {name}: fd {fd} is not open (filebench: 'attempted to fsync a closed "
                                   "fd')")
            self.emit({"op": "fsync", "data_only": False}, i)
        elif k == "fsyncset":
            set_i = self.a_set(st, required=True)
            if self.open_fd is not None and self.fd_set.get(self.open_fd) == set_i:
                self.emit({"op": "fsync", "data_only": False}, i)
        elif k in ("deletefile", "statfile"):
            fd = self._fd(st)
            set_i = self.a_set(st, required=False)
            if fd and fd in self.fd_set:
                set_i = self.fd_set[fd] if set_i is None else set_i
                self.warn(st, f"{k} {name}: fd={fd}: filebench {'deletes' if k == 'deletefile' else 'stats'} "
                              "the file open on it; here a file of the set picked at random")
            if set_i is None:
                raise self.err(st, f"{k} {name}: filesetname= is required")
            self.emit({"op": "delete" if k == "deletefile" else "stat", "set": set_i, "pick": {"kind": "random"}}, i)
        elif k == "listdir":
            set_i = self.a_set(st, required=True)
            self.emit({"op": "list_dir", "set": set_i}, i)
            self.warn(st, f"listdir {name}: filebench lists one directory of the fileset; here the whole "
                          "fileset's entries are read")
        elif k in ("makedir", "removedir"):
            raise self.err(st, f"{k} {name}: directories made and removed by flowops are not modelled")
        elif k == "delay":
            secs = self.a_int(st, "value")
            self.emit({"op": "delay", "ns": secs * 1_000_000_000, "busy": False}, i)
        elif k == "hog":
            loops = self.a_int(st, "value")
            self.emit({"op": "delay", "ns": loops * HOG_NS_PER_LOOP, "busy": True}, i)
            self.warn(st, f"hog {name}: {loops} loops counted as {loops * HOG_NS_PER_LOOP} ns of CPU "
                          f"({HOG_NS_PER_LOOP} ns a loop)")
        elif k in ("semblock", "sempost", "block", "wakeup"):
            self.warn(st, f"{k} {name}: synchronisation between threads is not modelled; the thread does not "
                          "wait here; ignored")
        elif k == "aiowait":
            self.warn(st, f"aiowait {name}: asynchronous I/O is not modelled (writes complete before the next "
                          "flowop); ignored")
        elif k in _LIMITS:
            if self.eventgen_rate > 0:
                raise self.err(st, f"{k} {name}: rate limits (eventgen rate {self.eventgen_rate}) are not "
                                   "modelled")
            self.warn(st, f"{k} {name}: no effect without an eventgen rate (as in filebench); ignored")
        elif k in ("finishoncount", "finishonbytes"):
            target = self.r.str(st.attrs.get("target"), st.path, f"flowop {k} target")
            self.finish.append((k, self.a_int(st, "value"), target, st))
        elif k in ("print", "testrandvar"):
            self.warn(st, f"{k} {name}: prints only; ignored")

    def direct(self, thread_st: ThreadStmt) -> bool:
        votes = {d for d, _ in self.direct_votes}
        if len(votes) > 1:
            self._warn(thread_st.path, thread_st.line,
                       f"thread {self.thread}: directio on some of its files only; the core's O_DIRECT is per "
                       "thread: all of its file I/O is direct")
        return True in votes


def _max_bytes(size: dict) -> int:
    return size["bytes"] if size["kind"] == "fixed" else size["max"]


# ==== the workload ==========================================================================

def build(script: Script, plain_size: str = "gamma") -> Workload:
    warnings = script.warnings
    seen: set[str] = set(warnings)

    def warn(path: str, line: int | None, message: str) -> None:
        text = f"{where(path, line)}: {message}"
        if text not in seen:
            seen.add(text)
            warnings.append(text)

    r = _Resolver(script)
    file_sets: list[FileSet] = []
    sets: dict[str, int] = {}
    for st in script.filesets:
        fs = _fileset(r, st, plain_size, warn)
        if fs.name in sets:
            raise FilebenchError(f"fileset '{fs.name}' is defined twice", path=st.path, line=st.line)
        sets[fs.name] = len(file_sets)
        file_sets.append(fs)

    rate = 0
    if script.eventgen is not None:
        rate = r.int(script.eventgen, script.path, "eventgen rate")

    threads: list[Thread] = []
    finishes = []
    for ps in script.processes:
        pname = r.str(ps.attrs.get("name"), ps.path, "define process: name")
        if not pname:
            raise FilebenchError("define process: name= is required", path=ps.path, line=ps.line)
        pinst = r.int(ps.attrs.get("instances"), ps.path, f"process {pname}: instances", default=1, minimum=1)
        if "nice" in ps.attrs:
            warn(ps.path, ps.attrs["nice"].line, f"process {pname}: nice: CPU priorities are not modelled; ignored")
        for ts in ps.threads:
            threads.append(_thread(r, ts, pname, pinst, sets, file_sets, rate, warn, finishes))

    _finish(finishes, threads, file_sets, warn)

    run_seconds: float | None = None
    if script.run_line is not None:
        if script.run_value is not None:
            run_seconds = r.int(Attr("run", script.run_value, script.run_value.line), script.run_value.path,
                                "run: seconds")
        if not run_seconds:
            run_seconds = DEFAULT_RUN_SECONDS if script.quit == "timeout" else None
    variables = {}
    for name, v in script.variables.items():
        try:
            rv = r.value(v, v.path, v.line, f"${name}")
        except FilebenchError:
            continue
        variables[name] = rv.v if rv.kind != "dist" else f"{rv.v['form']}(...)"
    return Workload(script.path, file_sets, threads, float(run_seconds) if run_seconds else None, script.quit,
                    warnings, list(script.messages), variables)


def _thread(r, ts: ThreadStmt, pname: str, pinst: int, sets, file_sets, rate, warn, finishes) -> Thread:
    tname = r.str(ts.attrs.get("name"), ts.path, "thread: name")
    if not tname:
        raise FilebenchError(f"a thread of process {pname} specifies no name", path=ts.path, line=ts.line)
    full = f"{pname}.{tname}"
    tinst = r.int(ts.attrs.get("instances"), ts.path, f"thread {full}: instances", default=1, minimum=1)
    if r.int(ts.attrs.get("memsize"), ts.path, f"thread {full}: memsize", default=0):
        warn(ts.path, ts.attrs["memsize"].line, f"thread {full}: memsize: the threads' own memory is not "
                                                "modelled (the page cache does not shrink by it); ignored")
    for attr, what in (("useism", "shared memory"), ("ioprio", "I/O priorities")):
        if attr in ts.attrs:
            warn(ts.path, ts.attrs[attr].line, f"thread {full}: {attr}: {what} not modelled; ignored")
    prog = _Program(r, full, ts.flowops, sets, file_sets, rate, warn)
    prog.build()
    if not prog.ops:
        raise FilebenchError(f"thread {full}: none of its flowops is one the core runs", path=ts.path, line=ts.line)
    if not file_sets:
        raise FilebenchError("the workload defines no fileset", path=ts.path, line=ts.line)
    main_set = next((o["set"] for o in prog.ops if "set" in o), 0)
    finishes.extend((k, v, tgt, st, len(finishes)) for k, v, tgt, st in prog.finish)
    return Thread(pname, tname, pinst, tinst, prog.flowops, prog.ops, prog.refs, main_set, prog.direct(ts), None,
                  ts.line, ts.path)


def _finish(finishes, threads: list[Thread], file_sets: list[FileSet], warn) -> None:
    """finishoncount/finishonbytes end filebench's run once all threads together have done so
    many operations (or bytes) of I/O. The core runs a program a number of times: every
    thread gets the number of passes that adds up to that much."""
    if not finishes:
        return
    passes = None
    for kind, value, target, st, _ in finishes:
        per_pass = 0.0
        for t in threads:
            amount = 0.0
            for idx, (fi, counts) in enumerate(t.op_flowop):
                fo = t.flowops[fi]
                if target is not None and fo.name != target:
                    continue
                if fo.stat_class not in ("io", "aio"):
                    continue
                if kind == "finishoncount":
                    amount += 1 if counts else 0
                else:
                    amount += _expected_bytes(idx, t, file_sets)
            per_pass += amount * t.instances
        if per_pass <= 0:
            raise FilebenchError(f"{kind}: no flowop {'of ' + target + ' ' if target else ''}counts towards it",
                                 path=st.path, line=st.line)
        n = max(1, math.ceil(max(value, 1) / per_pass))
        unit = "operations" if kind == "finishoncount" else "bytes"
        warn(st.path, st.line, f"{kind} value={value}: every thread runs its flowops {n} times (about "
                               f"{value} {unit} in all) rather than stopping at exactly {value}")
        passes = n if passes is None else min(passes, n)
    for t in threads:
        t.loops = passes


def _expected_bytes(idx: int, t: Thread, file_sets: list[FileSet]) -> float:
    op = t.ops[idx]
    kind = op["op"]
    if kind in ("read", "write"):
        return float(op["io_bytes"])
    if kind == "append":
        return size_mean(op["size"])
    if kind in ("read_whole", "write_whole"):
        # the set of the file: the last open/create before it
        for prev in reversed(t.ops[:idx]):
            if prev["op"] in ("open", "create"):
                return size_mean(file_sets[prev["set"]].size)
    return 0.0
