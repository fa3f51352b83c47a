"""A system file's file system for a drive or array: ``mke2fs`` options and mount options, as
the commands take them, turned into the core's FileSystemSpec.

    filesystem = "ext3"                                  # mke2fs's and the kernel's defaults
    filesystem = { type = "ext4", mkfs = "-b 4096 -i 65536 -I 256 -J size=128",
                   mount = "commit=15,barrier=0,data=ordered", size = "64g" }

``mkfs`` takes ``-b``, ``-N``, ``-i``, ``-I``, ``-J size=`` (MiB, as mke2fs), ``-E
lazy_itable_init=``, ``-O`` features the model has in the state it has them, ``-G 16`` and
``-m 5`` on ext4 and ext3 as made (the model's only values), ``-t`` naming the same type, and
``-q``/``-F``/``-L``/``-U``/``-M``/``-E stride=``/``-E stripe_width=`` (no effect on the model: a
warning). ``mount`` takes ``commit=``, ``barrier=0|1``, ``barrier``, ``nobarrier`` and
``data=ordered``; ``noatime``, ``relatime`` and a few others are accepted with a warning.
``size`` is the file system's size (a partition at the device's start; the whole device
when unsaid). Anything else is refused: :class:`MkfsError` names the key and what was
expected (the caller adds file and line). Sources: mke2fs(8) and ext4(5) of e2fsprogs and
the kernel's Documentation/admin-guide/ext4.rst.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from typing import Any

from .units import UnitError, parse_size, unit_reason

TYPES = ("ext3", "ext4")
MIB = 1 << 20


class MkfsError(ValueError):
    """A file-system option the model cannot take; ``key`` is the table's key (mkfs, mount,
    size or type)."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(message)
        self.key = key


@dataclass(frozen=True)
class FsRequest:
    """A target's file system as written in a system file."""

    type: str
    mkfs: str = ""
    mount: str = ""
    size: str | int | None = None


@dataclass
class Parsed:
    spec: dict[str, Any]
    warnings: list[str] = field(default_factory=list)


#: Features the model has and their state per type: ext3 as 2008's mke2fs made it, ext4
#: as today's (flex_bg and extents only on ext4).
def _features(fs_type: str) -> dict[str, bool]:
    ext4 = fs_type == "ext4"
    return {"has_journal": True, "flex_bg": ext4, "extent": ext4, "extents": ext4, "sparse_super": True,
            "resize_inode": True}


#: Options with no effect on what the model does (labels, UUIDs, verbosity, RAID hints the
#: model's allocator does not use).
_HARMLESS_FLAGS = {"-q", "-F", "-v"}
_HARMLESS_ARGS = {"-L", "-U", "-M"}
_HARMLESS_EXTENDED = {"stride", "stripe_width", "stripe-width", "discard", "nodiscard", "lazy_journal_init"}
_HARMLESS_MOUNT = {"noatime", "relatime", "atime", "nodiratime", "user_xattr", "nouser_xattr", "acl", "noacl",
                   "errors", "defaults", "rw", "auto", "noauto", "nodev", "nosuid", "noexec", "nouser"}


def default_block_size(size_bytes: int) -> int:
    """The block size mke2fs.conf's size type picks: 1 KiB under 512 MiB (floppy, small),
    else 4 KiB (as ``fs/layout.rs`` has it)."""
    return 1024 if size_bytes < 512 * MIB else 4096


def parse(req: FsRequest, capacity: int, device: str) -> Parsed:
    """The core's FileSystemSpec for ``req`` on a device of ``capacity`` bytes."""
    if req.type not in TYPES:
        raise MkfsError("type", f"{req.type!r}: expected \"ext3\" or \"ext4\"")
    out = Parsed({"type": req.type, "era": None, "block_size": None, "inode_count": None, "inode_ratio": None,
                  "inode_size": None, "journal_blocks": None, "lazy_itable_init": None,
                  "commit_interval_ns": 5 * 10**9, "barriers": None, "data_mode": "ordered", "size_bytes": None})
    size = capacity
    if req.size is not None:
        try:
            size = parse_size(req.size)
        except (UnitError, TypeError, ValueError) as e:
            raise MkfsError("size", f"{req.size!r}: {unit_reason(e)}") from None
        if size <= 0:
            raise MkfsError("size", f"{req.size!r}: expected a positive size")
        if size > capacity:
            raise MkfsError("size", f"{req.size!r} ({size:,} bytes) is larger than /dev/{device} "
                                    f"({capacity:,} bytes): a file system cannot pass its device's end")
        out.spec["size_bytes"] = size
    journal_mib = _mkfs(req, out)
    bs = out.spec["block_size"] or default_block_size(size)
    if out.spec["inode_size"] is not None and out.spec["inode_size"] > bs:
        raise MkfsError("mkfs", f"-I {out.spec['inode_size']}: larger than the block size ({bs})")
    if journal_mib is not None:
        blocks = journal_mib * MIB // bs
        # e2fsprogs' figure_journal_size: 1,024 to 10,240,000 blocks, at most half the file system.
        if not 1024 <= blocks <= 10_240_000 or blocks > size // bs // 2:
            raise MkfsError("mkfs", f"-J size={journal_mib}: {blocks:,} blocks of {bs} bytes; mke2fs takes 1,024 "
                                    f"blocks up to half the file system ({size // bs // 2:,})")
        out.spec["journal_blocks"] = blocks
    _mount(req, out)
    return out


def _mkfs(req: FsRequest, out: Parsed) -> int | None:
    """mke2fs's options into ``out``; returns -J size= (MiB), converted once the block size
    is known."""
    try:
        words = shlex.split(req.mkfs)
    except ValueError as e:
        raise MkfsError("mkfs", f"{req.mkfs!r}: {e}") from None
    spec = out.spec
    journal = None
    seen: set[str] = set()
    i = 0
    while i < len(words):
        w = words[i]
        if not w.startswith("-") or len(w) < 2:
            raise MkfsError("mkfs", f"{w!r}: a device or size is not given here (the file system's size is the "
                                    "table's size key)")
        opt, arg = w[:2], w[2:]
        if opt in _HARMLESS_FLAGS and not arg:
            out.warnings.append(f"mkfs {opt}: no effect on the model")
            i += 1
            continue
        if opt in ("-c", "-S", "-D", "-j") and not arg:
            if opt == "-j":  # a journal: what the model always has
                i += 1
                continue
            raise MkfsError("mkfs", f"{opt}: not modelled (expected -b, -N, -i, -I, -J size=, -O, -E, -G, -m, -t)")
        if not arg:
            if i + 1 >= len(words):
                raise MkfsError("mkfs", f"{opt}: expected a value after it")
            arg = words[i + 1]
            i += 1
        i += 1
        if opt in seen and opt not in ("-O", "-E"):
            raise MkfsError("mkfs", f"{opt} given twice")
        seen.add(opt)
        if opt == "-t":
            if arg != req.type:
                raise MkfsError("mkfs", f"-t {arg}: the table's type is {req.type}")
        elif opt == "-b":
            v = _size(opt, arg)
            if v not in (1024, 2048, 4096):
                raise MkfsError("mkfs", f"-b {arg}: expected 1024, 2048 or 4096")
            spec["block_size"] = v
        elif opt == "-N":
            spec["inode_count"] = _count(opt, arg)
        elif opt == "-i":
            v = _size(opt, arg)
            if not 1024 <= v <= 64 * MIB:  # mke2fs: EXT2_MIN_BLOCK_SIZE to EXT2_MAX_BLOCK_SIZE * 1024
                raise MkfsError("mkfs", f"-i {arg}: expected 1024 to 67108864 bytes per inode")
            spec["inode_ratio"] = v
        elif opt == "-I":
            v = _count(opt, arg)
            if v < 128 or v & (v - 1):
                raise MkfsError("mkfs", f"-I {arg}: expected a power of two, at least 128")
            spec["inode_size"] = v
        elif opt == "-J":
            key, eq, val = arg.partition("=")
            if key != "size" or not eq:
                raise MkfsError("mkfs", f"-J {arg}: expected size=MiB (an external journal, device=, is not "
                                        "modelled)")
            journal = _count("-J size", val)
        elif opt == "-O":
            _features_option(arg, req.type, out)
        elif opt == "-E":
            _extended(arg, out)
        elif opt == "-G":
            if req.type != "ext4" or _count(opt, arg) != 16:
                raise MkfsError("mkfs", f"-G {arg}: the model's flex groups are 16 block groups, on ext4 only")
        elif opt == "-m":
            if arg not in ("5", "5.0"):
                raise MkfsError("mkfs", f"-m {arg}: the model keeps mke2fs's 5 % for root; expected -m 5")
        elif opt in _HARMLESS_ARGS:
            out.warnings.append(f"mkfs {opt} {arg}: no effect on the model")
        else:
            raise MkfsError("mkfs", f"{opt}: not modelled (expected -b, -N, -i, -I, -J size=, -O, -E, -G, -m, -t)")
    return journal


def _features_option(arg: str, fs_type: str, out: Parsed) -> None:
    has = _features(fs_type)
    for f in filter(None, arg.split(",")):
        on = not f.startswith("^")
        name = f.lstrip("^")
        if name in has:
            if has[name] != on:
                state = "always has" if has[name] else "never has"
                raise MkfsError("mkfs", f"-O {f}: the model's {fs_type} {state} {name}")
        elif name in ("none",):
            raise MkfsError("mkfs", f"-O {f}: the model's {fs_type} has a journal and its default features")
        else:
            out.warnings.append(f"mkfs -O {f}: not modelled, ignored")


def _extended(arg: str, out: Parsed) -> None:
    for item in filter(None, arg.split(",")):
        key, _, val = item.partition("=")
        if key == "lazy_itable_init":
            if val not in ("0", "1"):
                raise MkfsError("mkfs", f"-E {item}: expected lazy_itable_init=0 or 1")
            out.spec["lazy_itable_init"] = val == "1"
        elif key in _HARMLESS_EXTENDED:
            out.warnings.append(f"mkfs -E {item}: not modelled, ignored")
        else:
            raise MkfsError("mkfs", f"-E {item}: not modelled (expected lazy_itable_init=, stride=, stripe_width=)")


def _mount(req: FsRequest, out: Parsed) -> None:
    spec = out.spec
    seen: set[str] = set()
    for item in filter(None, (s.strip() for s in req.mount.split(","))):
        key, eq, val = item.partition("=")
        if key in seen:
            raise MkfsError("mount", f"{key} given twice")
        seen.add(key)
        if key == "commit":
            if not val.isdigit():
                raise MkfsError("mount", f"{item}: expected commit=SECONDS, a whole number")
            # ext4(5): commit=0 means the default, 5 s.
            spec["commit_interval_ns"] = (int(val) or 5) * 10**9
        elif key == "barrier":
            if eq and val not in ("0", "1"):
                raise MkfsError("mount", f"{item}: expected barrier=0 or barrier=1")
            spec["barriers"] = not eq or val == "1"
        elif key in ("nobarrier",) and not eq:
            spec["barriers"] = False
        elif key == "data":
            if val not in ("ordered", "writeback"):
                raise MkfsError("mount", f"{item}: expected data=ordered or data=writeback (data=journal is not modelled)")
            spec["data_mode"] = val
        elif key in ("delalloc", "nodelalloc") and not eq:
            wanted = key == "delalloc"
            if req.type != "ext4" or not wanted:
                raise MkfsError("mount", f"{item}: the model's allocator has delayed allocation on ext4 only, "
                                         "always")
        elif key in _HARMLESS_MOUNT:
            out.warnings.append(f"mount {item}: not modelled, ignored")
        else:
            raise MkfsError("mount", f"{item}: not modelled (expected commit=, barrier=, nobarrier, data=ordered|writeback)")


def _size(opt: str, arg: str) -> int:
    try:
        return parse_size(arg)
    except (UnitError, TypeError, ValueError) as e:
        raise MkfsError("mkfs", f"{opt} {arg}: {e}") from None


def _count(opt: str, arg: str) -> int:
    if not arg.isdigit() or int(arg) < 1:
        raise MkfsError("mkfs", f"{opt} {arg}: expected a whole number, at least 1")
    return int(arg)


@dataclass(frozen=True)
class TargetFs:
    """A target's file system from a system file, with where each key was written (for
    errors found later, when ``--fs`` changes its type)."""

    request: FsRequest
    capacity: int
    device: str
    #: key (type, mkfs, mount, size) -> "file:line"
    places: dict[str, str]

    @property
    def origin(self) -> str:
        return self.places["type"]

    def parse(self, fs_type: str | None = None) -> Parsed:
        """The core's spec, its type replaced by ``fs_type`` (``--fs``) when given."""
        req = self.request if fs_type is None else FsRequest(fs_type, self.request.mkfs, self.request.mount,
                                                               self.request.size)
        try:
            return parse(req, self.capacity, self.device)
        except MkfsError as e:
            via = f" (with --fs {fs_type})" if fs_type is not None and fs_type != self.request.type else ""
            raise ValueError(f"{self.places[e.key]}: /dev/{self.device}: filesystem.{e.key}: {e}{via}") from None


def request(raw: Any) -> FsRequest:
    """A system file's ``filesystem`` value as a request (:class:`MkfsError` naming the key
    it is wrong at)."""
    if isinstance(raw, str):
        return FsRequest(raw)
    if not isinstance(raw, dict):
        raise MkfsError("type", f"{raw!r}: expected \"ext3\", \"ext4\" or a table {{ type, mkfs, mount, size }}")
    for k in raw:
        if k not in ("type", "mkfs", "mount", "size"):
            raise MkfsError(k, "unknown key (expected type, mkfs, mount, size)")
    if "type" not in raw:
        raise MkfsError("type", "missing: expected type = \"ext3\" or \"ext4\"")
    for k in ("type", "mkfs", "mount"):
        if k in raw and not isinstance(raw[k], str):
            raise MkfsError(k, f"{raw[k]!r}: expected a string")
    if "size" in raw and (isinstance(raw["size"], bool) or not isinstance(raw["size"], (str, int))):
        raise MkfsError("size", f"{raw['size']!r}: expected a size, e.g. \"64g\"")
    return FsRequest(raw["type"], raw.get("mkfs", ""), raw.get("mount", ""), raw.get("size"))
