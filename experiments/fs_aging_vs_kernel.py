"""The seed's file-system aging, on the real kernel and through ssdlab's ext3/ext4 model.

Procedure (seed: "fill with 4 KB files, delete every even one, fill with 7 KB files, delete
every even one"): on a 256 MiB image, files are written one after another into the root
directory until one does not fit (that one removed), `sync`, every other file deleted, `sync`,
then the next size. After unmounting, `e2freefrag` gives the free-extent histogram and
FIEMAP (what `filefrag` reads) the extents of every 7 KB file left. The model runs the same
procedure (`cargo run --release --example fs_age`), and both are printed side by side.

Needs root, loop devices, `mkfs.ext4`/`mkfs.ext3` and `e2freefrag` for the kernel side;
without them (or with --model-only) only the model runs. Standard library only:

    python3 experiments/fs_aging_vs_kernel.py [--json out.json] [--model-only]
"""

from __future__ import annotations

import argparse
import array
import errno
import fcntl
import json
import os
import platform
import re
import shutil
import struct
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SIZE = 256 << 20
FILE_SIZES = (4096, 7168)
# (label, mkfs type, block size, the model's kind): today's kernel mounts ext3 with the
# ext4 driver (mballoc, delayed allocation, block-mapped files), the model's "ext3".
CASES = (("ext4-1k", "ext4", 1024, "ext4"), ("ext4-4k", "ext4", 4096, "ext4"), ("ext3-1k", "ext3", 1024, "ext3"))

FS_IOC_FIEMAP = 0xC020660B


def fiemap(path: str) -> list[tuple[int, int, int]]:
    """(logical, physical, length) in bytes of a file's extents, by the FIEMAP ioctl."""
    count = 64
    hdr = struct.pack("=QQLLLL", 0, 0xFFFFFFFFFFFFFFFF, 1, 0, count, 0)  # FIEMAP_FLAG_SYNC
    buf = array.array("B", hdr + b"\0" * (56 * count))
    with open(path, "rb") as f:
        fcntl.ioctl(f.fileno(), FS_IOC_FIEMAP, buf, True)
    mapped = struct.unpack_from("=L", buf, 20)[0]
    out = []
    for i in range(mapped):
        logical, physical, length = struct.unpack_from("=QQQ", buf, 32 + 56 * i)
        out.append((logical, physical, length))
    return out


def runs(extents: list[tuple[int, int, int]]) -> int:
    """Extents as filefrag counts them: physically and logically contiguous ones join."""
    n, end_l, end_p = 0, None, None
    for l, p, length in extents:
        if l != end_l or p != end_p:
            n += 1
        end_l, end_p = l + length, p + length
    return n


def parse_freefrag(text: str) -> dict:
    out = {"buckets": []}
    for key, pat in (("free_blocks", r"Free blocks: (\d+)"), ("free_extents", r"Num\. free extent: (\d+)"), ("max_kb", r"Max\. free extent: (\d+) KB"), ("min_kb", r"Min\. free extent: (\d+) KB")):
        m = re.search(pat, text)
        out[key] = int(m.group(1)) if m else 0
    unit = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    for m in re.finditer(r"^\s*(\d+)([KMG])\.\.\.\s*(\d+)([KMG])-\s*:\s*(\d+)\s+(\d+)", text, re.M):
        out["buckets"].append({"start_bytes": int(m.group(1)) * unit[m.group(2)], "extents": int(m.group(5)), "blocks": int(m.group(6))})
    return out


def run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw)


def kernel_missing() -> str | None:
    """Why the kernel side cannot run here, or None."""
    if os.geteuid() != 0:
        return "not root"
    for tool in ("mkfs.ext4", "mkfs.ext3", "e2freefrag", "losetup", "mount", "umount"):
        if shutil.which(tool) is None:
            return f"{tool} not found"
    if not Path("/dev/loop-control").exists():
        return "no /dev/loop-control"
    return None


def fill(mnt: Path, prefix: str, size: int) -> list[str]:
    data = b"\xa5" * size
    names = []
    i = 0
    while True:
        name = f"{prefix}{i:07d}"
        path = mnt / name
        try:
            with open(path, "wb") as f:
                f.write(data)
        except OSError as e:
            if e.errno not in (errno.ENOSPC, errno.EDQUOT):
                raise
            try:
                path.unlink()
            except FileNotFoundError:
                pass
            break
        names.append(name)
        i += 1
    return names


def kernel_case(mkfs: str, block_size: int, workdir: Path) -> dict:
    img = workdir / f"{mkfs}-{block_size}.img"
    mnt = workdir / "mnt"
    mnt.mkdir(exist_ok=True)
    with open(img, "wb") as f:
        f.truncate(SIZE)
    run([f"mkfs.{mkfs}", "-q", "-F", "-b", str(block_size), "-E", "nodiscard", str(img)])
    run(["mount", "-o", "loop", str(img), str(mnt)])
    phases, extents = [], Counter()
    try:
        kept_all = []
        for k, size in enumerate(FILE_SIZES):
            names = fill(mnt, f"p{k}_", size)
            os.sync()
            kept = []
            for i, name in enumerate(names):
                if i % 2 == 0:
                    (mnt / name).unlink()
                else:
                    kept.append(name)
            os.sync()
            phases.append({"file_bytes": size, "written": len(names), "kept": len(kept)})
            kept_all.append(kept)
        for name in kept_all[-1]:
            extents[runs(fiemap(str(mnt / name)))] += 1
    finally:
        run(["umount", str(mnt)])
    ff = parse_freefrag(run(["e2freefrag", str(img)]).stdout)
    img.unlink()
    return {"phases": phases, "freefrag": ff, "extents_per_file": dict(sorted(extents.items()))}


def model_case(kind: str, block_size: int, writeback: str) -> dict:
    """The model's run; `writeback`: "block" (allocation at write time, block by block) or
    "whole" (each file in one request, as delayed allocation does at sync)."""
    cmd = ["cargo", "run", "-q", "--release", "-p", "ssdlab-core", "--example", "fs_age", "--", kind, str(SIZE), str(block_size), *map(str, FILE_SIZES)]
    d = json.loads(run(cmd, cwd=REPO, env={**os.environ, "FS_AGE_WRITEBACK": writeback}).stdout)
    ff = d["freefrag"]
    last = f"p{len(FILE_SIZES) - 1}_"
    extents = Counter(len(f["extents"]) for f in d["files"] if f["name"].startswith(last))
    return {
        "phases": d["phases"],
        "freefrag": {"free_blocks": ff["free_blocks"], "free_extents": ff["free_extents"], "max_kb": ff["max_blocks"] * block_size // 1024, "min_kb": ff["min_blocks"] * block_size // 1024, "buckets": [{"start_bytes": b["start_bytes"], "extents": b["extents"], "blocks": b["blocks"]} for b in ff["buckets"]]},
        "extents_per_file": dict(sorted(extents.items())),
    }


def size_label(b: int) -> str:
    for unit, scale in (("M", 1 << 20), ("K", 1 << 10)):
        if b >= scale:
            return f"{b // scale}{unit}"
    return f"{b}B"


def compare(label: str, kernel: dict | None, models: dict[str, dict]) -> None:
    """Kernel and model runs side by side; differences are model minus kernel."""
    names = list(models)
    print(f"\n=== {label}   (model columns: {', '.join(names)}; d = model - kernel)")
    print(f"{'':28}{'kernel':>9}" + "".join(f"{n:>9}{'d':>7}" for n in names))

    def row(title, k, ms):
        cells = "".join(f"{m:>9}{'' if k is None else f'{m - k:+d}':>7}" for m in ms)
        print(f"{title:28}{'' if k is None else k:>9}{cells}")

    for i, mp in enumerate(models[names[0]]["phases"]):
        kp = kernel["phases"][i]["written"] if kernel else None
        row(f"files of {mp['file_bytes']} B written", kp, [models[n]["phases"][i]["written"] for n in names])
    kf = kernel["freefrag"] if kernel else None
    for key in ("free_blocks", "free_extents", "max_kb"):
        row(key, kf and kf[key], [models[n]["freefrag"][key] for n in names])
    buckets = lambda ff: {b["start_bytes"]: b for b in ff["buckets"]}
    starts = sorted(set().union(*(buckets(m["freefrag"]) for m in models.values()), buckets(kf) if kf else {}))
    print("free extents of size (extents / blocks):")
    for s in starts:
        get = lambda ff: buckets(ff).get(s, {"extents": 0, "blocks": 0})
        row(f"  {size_label(s)}...{size_label(2 * s)}- extents", kf and get(kf)["extents"], [get(models[n]["freefrag"])["extents"] for n in names])
        row(f"  {size_label(s)}...{size_label(2 * s)}- blocks", kf and get(kf)["blocks"], [get(models[n]["freefrag"])["blocks"] for n in names])
    print("extents per file left of the last round:")
    print(f"  kernel {(kernel or {}).get('extents_per_file')}")
    for n in names:
        print(f"  model ({n}) {models[n]['extents_per_file']}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--model-only", action="store_true")
    ap.add_argument("--case", action="append", choices=[c[0] for c in CASES], help="only these cases (repeatable)")
    args = ap.parse_args()
    why = "--model-only" if args.model_only else kernel_missing()
    if why:
        print(f"kernel side skipped: {why}", file=sys.stderr)
    results = {"kernel_release": platform.release(), "cases": {}}
    with tempfile.TemporaryDirectory(prefix="fs-aging-") as tmp:
        for label, mkfs, bs, kind in CASES:
            if args.case and label not in args.case:
                continue
            kernel = None if why else kernel_case(mkfs, bs, Path(tmp))
            models = {wb: model_case(kind, bs, wb) for wb in ("block", "whole")}
            results["cases"][label] = {"kernel": kernel, "model": models}
            compare(label, kernel, models)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
