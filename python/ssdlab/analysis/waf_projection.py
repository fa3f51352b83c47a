"""The rebuilt drive's WAF over a whole rebuild, projected from a sample.

A sampled rebuild (``ssdlab rebuild --sample``) simulates the first part of the replacement,
while it is still mostly empty. Its WAF then says nothing of what happens later: as the
rebuild fills the drive, the host's writes land in the same flash blocks as the rebuild's own
writes. When the host overwrites its data (or the rebuild overwrites what the host wrote
ahead of it), those blocks keep the other stream's data valid, and once the drive is full, GC
must copy it to reclaim them. The rebuilt drive's WAF comes from that mix (seed 004's 1.21 for
xiRAID under load).

The projection runs the replacement alone, from empty to full, fed the two write streams it
gets over a whole rebuild, at the rates the sample measured:

* the rebuild's, in ascending order at the sampled rebuild rate, in the sample's write size;
* each host writer's share of a member, at the rate a surviving member received from it, in
  the survivors' mean write size, over its region for the whole rebuild: the replacement takes
  the host's writes ahead of the rebuild front as well as behind it (md writes to any member
  that is not faulty; the array model does so for every engine).

A whole 61.44 TB drive is too big to run, and the profile's ``simulation_scale`` shrinks blocks,
which would change what shares a block. So the projected drive keeps the drive's block size,
its GC reserve and its working spare (the share of its flash above the reserve that holds no
user data) and has fewer blocks; every offset, size and time shrinks with its capacity, rates
stay. Its error against a full simulation is measured in docs/arrays.md.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from ..iosched import QUEUE
from ..system import Array, Drive, System

#: Blocks per plane of the projected drive (unless the drive has fewer): at seed 004's 16 KiB
#: IU and 24 MiB plane-blocks, 64 make a 288 GB drive that runs a rebuild under load in 30-90 s.
DEFAULT_BLOCKS_PER_PLANE = 64

SEQUENTIAL_WRITES = {"write", "rw", "readwrite"}
WRITES = SEQUENTIAL_WRITES | {"randwrite", "randrw", "trimwrite"}


@dataclass
class WafProjection:
    waf: float
    #: The projected drive: blocks per plane, user bytes, its share of the real drive.
    blocks_per_plane: int
    drive_bytes: int
    fraction: float
    rebuild_rate_bytes: float
    #: The write size of the rebuild's stream and of the host's.
    rebuild_bs: int
    host_bs: int
    #: Host writes a member receives, per second, from every writer.
    host_write_rate_bytes: float
    writers: int
    #: Bytes the projected drive was asked to take and took.
    planned_bytes: int
    written_bytes: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class _Writer:
    name: str
    clone: int
    sequential: bool
    #: Where it starts and how far it goes, in array bytes (the simulated array's).
    offset: int
    size: int
    #: Array bytes it wrote per second in the sample.
    rate: float


def _writers(spec_core: dict[str, Any], result_core: dict[str, Any], target_index: int, secs: float) -> list[_Writer]:
    written = {(j["name"], j["clone"]): j["write"]["bytes"] for j in result_core["jobs"]}
    out = []
    for j in spec_core["jobs"]:
        if j["target"] != target_index or j["rw"] not in WRITES:
            continue
        out.append(_Writer(j["name"], j["clone"], j["rw"] in SEQUENTIAL_WRITES, j["region_offset"],
                           j["region_size"], written.get((j["name"], j["clone"]), 0) / secs))
    return out


def _has_flash(drive: Drive) -> bool:
    return hasattr(drive.profile, "nand") and hasattr(drive.profile, "ftl")


def projected_drive(drive: Drive, blocks_per_plane: int) -> tuple[dict[str, Any], float] | None:
    """The core description of ``drive`` with its own block size and ``blocks_per_plane``
    blocks (fewer, if it has fewer), and the share of the real drive it holds; None for a
    drive without flash blocks."""
    prof = drive.profile
    if not _has_flash(drive):
        return None
    core = prof.to_core(1.0)
    n = core["nand"]
    blocks = min(blocks_per_plane, n["blocks_per_plane"])
    per_block = n["page_bytes"] * n["pages_per_block"] * n["channels"] * n["dies_per_channel"] * n["planes_per_die"]
    raw, raw_full = per_block * blocks, per_block * n["blocks_per_plane"]
    # The core's GC reserve: gc_threshold_blocks + 3 blocks on every die (ssd/config.rs).
    reserve = per_block * (core["ftl"]["gc_threshold_blocks"] + 3)
    working_spare = (raw_full - per_block * (core["ftl"]["gc_threshold_blocks"] + 3) - prof.capacity) / raw_full
    iu = core["ftl"]["iu_bytes"]
    capacity = int(raw - reserve - working_spare * raw) // iu * iu
    if capacity <= 0:
        raise ValueError(f"the WAF projection's drive of {blocks} blocks per plane has no room for user data "
                         "beside its GC reserve: give it more blocks")
    core["nand"]["blocks_per_plane"] = blocks
    core["capacity_bytes"] = capacity
    return core, capacity / prof.capacity


def fewer_blocks(profile: str, blocks: int) -> dict[str, str]:
    """``profile_set`` keys that make ``profile`` a drive of ``blocks`` blocks per plane, as the
    projection shrinks one (its own block size, GC reserve and working spare): a drive small
    enough to rebuild in full, for checking the projection."""
    from ..system import single

    core, _ = projected_drive(single(profile, scale=1.0).drives[0], blocks)
    return {"nand.blocks_per_plane": str(blocks), "capacity": str(core["capacity_bytes"])}


@dataclass
class _Job:
    """One job of the projection: a part of one stream, on the projected drive."""

    rw: str
    offset: int
    size: int
    delay_us: int
    runtime_us: int
    rate: float


def _job_text(rebuild_bs: int, host_bs: int, jobs: list[_Job], rate: float, capacity: int) -> str:
    lines = ["[global]", "direct=1", "ioengine=libaio", "iodepth=8", "",
             "[rebuild]", "rw=write", f"bs={rebuild_bs}", f"size={capacity}", f"rate={max(1, round(rate))}", ""]
    for i, j in enumerate(jobs):
        lines += [f"[host{i}]", f"rw={j.rw}", f"bs={host_bs}", f"offset={j.offset}", f"size={j.size}",
                  f"rate={max(1, round(j.rate))}", f"startdelay={j.delay_us}us", "time_based",
                  f"runtime={j.runtime_us}us", ""]
    return "\n".join(lines)


@dataclass
class HostStream:
    """One host writer as a member sees it: where its region starts and ends (member bytes of
    the real drive), what it writes there per second, and whether it writes its region in
    order (else all over it)."""

    start: float
    end: float
    rate: float
    sequential: bool


def _stream_job(w: HostStream, duration: float, fraction: float, iu: int, min_size: int) -> list[_Job]:
    """The projection's job for stream ``w`` (in the projected drive's bytes and time): over
    its region for the whole rebuild, a sequential writer from where it starts (wrapping at
    the end of its region, as fio's time_based jobs do)."""
    offset, size = int(w.start * fraction) // iu * iu, int((w.end - w.start) * fraction) // iu * iu
    runtime = round(duration * fraction * 1e6)
    rw = "write" if w.sequential else "randwrite"
    return [_Job(rw, offset, size, 0, runtime, w.rate)] if size >= min_size and runtime > 0 and w.rate > 0 else []


def run_streams(drive: Drive, rebuild_rate: float, streams: list[HostStream], *, rebuild_bs: int, host_bs: int,
                blocks_per_plane: int = DEFAULT_BLOCKS_PER_PLANE, seed: int = 0) -> WafProjection:
    """Run a whole rebuild of ``drive`` (a replacement) alone on a drive of its blocks, fed
    the rebuild's stream at ``rebuild_rate`` and every host stream."""
    from ..api import build, execute

    made = projected_drive(drive, blocks_per_plane)
    if made is None:
        raise ValueError(f"{drive.name} has no flash blocks to project")
    core, fraction = made
    capacity = core["capacity_bytes"]
    duration = drive.profile.capacity / rebuild_rate
    jobs, reach = [], 0.0
    for w in streams:
        mine = _stream_job(w, duration, fraction, core["ftl"]["iu_bytes"], host_bs)
        jobs += mine
        reach += w.rate if mine else 0.0
    text = _job_text(rebuild_bs, host_bs, jobs, rebuild_rate, capacity)
    projected = Drive("projected", drive.profile, drive.sources, core, 1.0, drive.precondition)
    run = execute(build(text, system=System([projected], strict=False), seed=seed))
    internal = run.devices[0]["internal"]
    written = internal["host_bytes_written"]
    planned = capacity + sum(round(j.rate * j.runtime_us / 1e6) for j in jobs)
    return WafProjection(
        waf=internal["media_bytes_written"] / written, blocks_per_plane=core["nand"]["blocks_per_plane"],
        drive_bytes=capacity, fraction=fraction, rebuild_rate_bytes=rebuild_rate, rebuild_bs=rebuild_bs, host_bs=host_bs,
        host_write_rate_bytes=reach,
        writers=len(streams),
        planned_bytes=planned, written_bytes=written)


def project(result, spec_core: dict[str, Any], target: Array, *, seed: int = 0,
            blocks_per_plane: int = DEFAULT_BLOCKS_PER_PLANE) -> tuple[WafProjection | None, str | None]:
    """Project the rebuilt drive's WAF from a sampled rebuild; returns the projection, or None
    and why it was not made."""
    dev = next(d for d in result.devices if d["name"] == target.name)
    rb = dev["internal"]["array"]["rebuild"]
    rate = rb["done_bytes"] / ((rb["finished_ns"] - rb["started_ns"]) / 1e9)
    elapsed = (result.core["end_ns"] - result.core["start_ns"]) / 1e9
    index = [t["name"] for t in spec_core["targets"]].index(target.name)
    writers = [w for w in _writers(spec_core, result.core, index, elapsed) if w.rate > 0]
    if not writers:
        return None, "no host writes to the array"
    replacement = next(d for d in target.spares if d.name == rb["member"])
    if not _has_flash(replacement):
        return None, f"{replacement.name} has no flash blocks to project"
    members = {d.name for d in target.members}
    survivors = [m for m in dev["members"] if m["name"] in members and m["name"] not in (rb["member"], rb["replaces"])]
    host_written = sum(m["disk"]["write_sectors"] * 512 for m in survivors)
    host_ios = sum(m["disk"]["write_ios"] for m in survivors)
    member_rate = host_written / len(survivors) / elapsed

    def size_of(b: float) -> int:
        return max(4096, int(b) // 4096 * 4096)

    # The array's data bytes per member byte: a writer's offset in a member's terms.
    array_bytes = target.capacity
    per_member = array_bytes / target.member_bytes
    full = replacement.profile.capacity
    total_rate = sum(w.rate for w in writers)
    streams = [HostStream(
        start=w.offset / per_member, sequential=w.sequential,
        rate=member_rate * w.rate / total_rate,
        # A writer to the end of the simulated array goes on to the end of the real one.
        end=min(full, (w.offset + w.size) / per_member) if w.size < array_bytes - w.offset else full)
        for w in writers]
    # The rebuild's unit as the replacement's block layer passes it on (the replacement's own
    # write count now holds the host's writes ahead of the front too).
    max_request = int(replacement.queue.get("max_sectors_kb", QUEUE["max_sectors_kb"][2])) * 1024
    made = run_streams(replacement, rate, streams, rebuild_bs=size_of(min(rb["unit_bytes"], max_request)),
                       host_bs=size_of(host_written / max(1, host_ios)), blocks_per_plane=blocks_per_plane, seed=seed)
    return made, None


__all__ = ["DEFAULT_BLOCKS_PER_PLANE", "HostStream", "WafProjection", "fewer_blocks", "project", "projected_drive",
           "run_streams"]
