"""Seed 000, item 3 — "MFT" host-side write remapping on a 2008 MLC SSD and a 2008 disk (Kim
In-sung, "SSD story 7: SSDs and servers", blog, December 2008, http://minix.tistory.com/93).

The blog tried Managed Flash Technology, a driver that catches the SSD's writes, buffers
them in RAM and writes them as large sequential runs. Its claims, without figures: small-block
reads and writes in a 4:1 mix gain; the gain on a disk is about the same as on the SSD (from
which the blog concludes that most of it comes from the RAM buffer); and it is unsafe, since
data in its buffer is lost at a power cut although it ignores the cache-flush requests that
databases rely on. The layer is ssdlab's remapping target (docs/remap.md) with its assumed
defaults; each drive is run alone and under it.
"""

from __future__ import annotations

import argparse
import tempfile
from dataclasses import dataclass

from ..api import build, execute
from ..reference import SEED000_MFT_CLAIMS
from ..system import single, with_remap
from .seed000_ssd_state import SSD_STATE

DRIVES = {"ssd": "intel-x25-m-80", "hdd": "seagate-barracuda-7200.11-1tb"}
#: the disk again with its write cache off (hdparm -W0), as servers often ran them: shown
#: beside the row on the disk as shipped, not judged
WRITE_CACHE_OFF = "hdd, write cache off"
HOST = "server-2008"
#: the SSD simulated at a tenth of its flash (8 GB): the runs touch 4 GiB of it
SSD_SCALE = 0.1
REGION = "4g"
#: when the power fails in the power-cut runs
CUT = "2s"
#: the sustained runs' ramp (fio's ramp_time), left out of their figures: long enough for the
#: buffers a short run writes into to fill. The disk's 32 MB cache takes the 4:1 mix's writes
#: (a fifth of about 400 IOPS of 4 KiB, 0.33 MB/s) for about 100 s, longer than the runs
#: themselves; the layer's buffer and the SSD's GC settle sooner.
SUSTAIN_RAMP_S = 120.0
#: the runs measured sustained as well: (drive, rw, bs)
SUSTAINED = (("ssd", "randwrite", "4k"), ("ssd", "randrw", "4k"), ("hdd", "randrw", "4k"))

#: our readings of the blog's words (it gives no figures)
#: "faster": random 4 KiB writes at least twice as fast through the layer
WRITE_GAIN = 2.0
#: "a substantial gain" on the 4:1 mix of 4 KiB: at least 1.2 times
MIX_GAIN = 1.2
#: "about the same on a disk": the disk's gain within this factor of the SSD's, either way
ALIKE = 1.5


def job(rw: str, bs: str, runtime_s: float, *, mix: int = 80, fsync: int = 0, device: str = "mft0",
        ramp_s: float = 0.0) -> str:
    return (f"[{rw}-{bs}]\nfilename=/dev/{device}\nioengine=libaio\ndirect=1\nrw={rw}\nrwmixread={mix}\nbs={bs}\n"
            f"iodepth=4\nsize={REGION}\nruntime={runtime_s:g}\ntime_based=1\nrandrepeat=1\n"
            + (f"fsync={fsync}\n" if fsync else "") + (f"ramp_time={ramp_s:g}\n" if ramp_s else ""))


def system(drive: str, layer: bool, **options):
    if drive == WRITE_CACHE_OFF:
        sysd = single(DRIVES["hdd"], profile_set={"cache.write_back": "false"}, precondition="sequential")
    else:
        sysd = single(DRIVES[drive], scale=SSD_SCALE if drive == "ssd" else None,
                      precondition=SSD_STATE if drive == "ssd" else "sequential")
    return with_remap(sysd, **options) if layer else sysd


@dataclass
class Iops:
    read: float
    write: float

    @property
    def total(self) -> float:
        return self.read + self.write


def iops(drive: str, layer: bool, rw: str, bs: str, runtime_s: float, seed: int, ramp_s: float = 0.0,
         state_cache: str | None = None) -> Iops:
    sysd = system(drive, layer)
    text = job(rw, bs, runtime_s, device="mft0" if layer else sysd.drives[0].name, ramp_s=ramp_s)
    core = execute(build(text, system=sysd, host=HOST, seed=seed), state_cache=state_cache).core
    j = core["jobs"][0]
    secs = (j["end_ns"] - j["measure_start_ns"]) / 1e9
    return Iops(j["read"]["ios"] / secs, j["write"]["ios"] / secs)


@dataclass
class Cut:
    """A power cut during 4 KiB random writes with an fsync after each."""
    case: str
    writes_acked: int
    lost_bytes: int
    promised_bytes: int
    broken_fsyncs: int


def power_cut(case: str, seed: int, state_cache: str | None = None) -> Cut:
    layer = case != "ssd alone"
    sysd = system("ssd", layer, honor_flush=case == "mft honouring flushes")
    text = job("randwrite", "4k", 10, fsync=1, device="mft0" if layer else sysd.drives[0].name)
    core = execute(build(text, system=sysd, host=HOST, seed=seed, power_cut=CUT), state_cache=state_cache).core
    top = core["power_cut"]["devices"][0]
    lost = top["volatile_bytes"] + sum(m["volatile_bytes"] for m in top["members"])
    return Cut(case, core["jobs"][0]["write"]["ios"], lost, top["promised_bytes"], top["broken_flushes"])


CASES = ("ssd alone", "mft", "mft honouring flushes")


def reproduce(quick: bool = False, seed: int = 0) -> dict:
    runtime = 3.0 if quick else 10.0
    speed = {}
    # The used SSD is preconditioned once and read back by the runs after the first.
    with tempfile.TemporaryDirectory(prefix="ssdlab-mft-") as cache:
        for drive in DRIVES:
            for rw, bs in (("randwrite", "4k"), ("randrw", "4k"), ("randrw", "64k")):
                speed[(drive, rw, bs)] = {layer: iops(drive, layer, rw, bs, runtime, seed, state_cache=cache)
                                          for layer in (False, True)}
        speed[(WRITE_CACHE_OFF, "randrw", "4k")] = {layer: iops(WRITE_CACHE_OFF, layer, "randrw", "4k", runtime, seed)
                                                    for layer in (False, True)}
        # The same after the buffers have filled: shown beside the rows, not judged (the blog
        # does not say how long its runs were).
        sustained = {(d, rw, bs): {layer: iops(d, layer, rw, bs, runtime, seed, SUSTAIN_RAMP_S, state_cache=cache)
                                   for layer in (False, True)} for d, rw, bs in SUSTAINED}
        cuts = [power_cut(c, seed, state_cache=cache) for c in CASES]
    return {"speed": speed, "sustained": sustained, "cuts": cuts}



def sustained_note(data: dict, keys) -> str:
    """The sustained gains of ``keys``, as a note beside a row."""
    sp = data.get("sustained") or {}
    parts = [f"{d} {rw} {bs}: {sp[(d, rw, bs)][False].total:,.0f} -> {sp[(d, rw, bs)][True].total:,.0f} IOPS "
             f"({gain(sp, d, rw, bs):.2f}x)" for d, rw, bs in keys if (d, rw, bs) in sp]
    return f"; not judged, sustained (after a {SUSTAIN_RAMP_S:g} s ramp): " + "; ".join(parts) if parts else ""


def gain(speed: dict, drive: str, rw: str, bs: str) -> float:
    s = speed[(drive, rw, bs)]
    return s[True].total / s[False].total if s[False].total else float("inf")


@dataclass
class Trend:
    claim: str
    published: str
    reading: str
    holds: bool
    evidence: str


def trends(data: dict) -> list[Trend]:
    sp = data["speed"]
    g = {(d, rw, bs): gain(sp, d, rw, bs) for (d, rw, bs) in sp}
    cuts = {c.case: c for c in data["cuts"]}
    ssd_mix, hdd_mix = g[("ssd", "randrw", "4k")], g[("hdd", "randrw", "4k")]
    alike = max(ssd_mix, hdd_mix) / min(ssd_mix, hdd_mix)
    fmt = lambda d, rw, bs: (f"{d} {rw} {bs}: {sp[(d, rw, bs)][False].total:,.0f} -> "  # noqa: E731
                             f"{sp[(d, rw, bs)][True].total:,.0f} IOPS ({g[(d, rw, bs)]:.2f}x)")
    m, alone, honour = cuts["mft"], cuts["ssd alone"], cuts["mft honouring flushes"]
    return [
        Trend("random 4 KiB writes go faster on the MLC SSD through the layer", SEED000_MFT_CLAIMS["faster"],
              f"at least {WRITE_GAIN:g}x", g[("ssd", "randwrite", "4k")] >= WRITE_GAIN,
              fmt("ssd", "randwrite", "4k") + sustained_note(data, [("ssd", "randwrite", "4k")])),
        Trend("the 4:1 read/write mix of 4 KiB gains on the MLC SSD", SEED000_MFT_CLAIMS["small blocks"],
              f"at least {MIX_GAIN:g}x", ssd_mix >= MIX_GAIN, fmt("ssd", "randrw", "4k")),
        Trend("small blocks gain more than large ones (4:1 mix, 4 KiB vs 64 KiB, SSD)", SEED000_MFT_CLAIMS["small blocks"],
              "the 4 KiB gain above the 64 KiB one", ssd_mix > g[("ssd", "randrw", "64k")],
              f"{fmt('ssd', 'randrw', '4k')}; {fmt('ssd', 'randrw', '64k')}"),
        Trend("the gain on the disk is about the gain on the SSD (4:1 mix, 4 KiB)", SEED000_MFT_CLAIMS["disk alike"],
              f"within {ALIKE:g}x of each other, on the disk as shipped (write cache on)", alike <= ALIKE,
              f"{fmt('ssd', 'randrw', '4k')}; {fmt('hdd', 'randrw', '4k')}; not judged: "
              f"{fmt(WRITE_CACHE_OFF, 'randrw', '4k')}"
              + sustained_note(data, [("ssd", "randrw", "4k"), ("hdd", "randrw", "4k")])),
        Trend("a power cut loses data whose fsync had returned, through the layer only", SEED000_MFT_CLAIMS["unsafe"],
              "fsync'd bytes lost under MFT; none on the drive alone or with flushes honoured",
              m.promised_bytes > 0 and alone.promised_bytes == 0 and honour.promised_bytes == 0,
              "; ".join(f"{c.case}: {c.writes_acked:,} writes acked, {c.lost_bytes / 2**20:.1f} MiB lost, "
                        f"{c.promised_bytes / 2**20:.1f} MiB of it fsync'd ({c.broken_fsyncs:,} fsyncs broken)"
                        for c in (alone, m, honour))),
    ]


def plot(data: dict, path) -> None:
    """IOPS per drive and workload, alone and through the layer; what a power cut lost."""
    from pathlib import Path

    from ..plotting import pyplot, save

    plt = pyplot()
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(11, 4.2))
    keys = list(data["speed"])
    x = range(len(keys))
    ax.bar([i - 0.2 for i in x], [data["speed"][k][False].total for k in keys], 0.4, label="drive alone", color="#999999")
    ax.bar([i + 0.2 for i in x], [data["speed"][k][True].total for k in keys], 0.4, label="through MFT", color="#4878a8")
    ax.set_xticks(list(x), [f"{d.replace(', write cache off', ' (cache off)')}\n{rw}\n{bs}" for d, rw, bs in keys],
                  fontsize=7)
    ax.set_yscale("log")
    ax.set_ylabel("IOPS (reads + writes)")
    ax.legend()
    ax.set_title("MFT: alone vs through the layer")
    cuts = data["cuts"]
    bx.bar(range(len(cuts)), [c.lost_bytes / 2**20 for c in cuts], 0.5, color="#bbbbbb", label="acknowledged, lost")
    bx.bar(range(len(cuts)), [c.promised_bytes / 2**20 for c in cuts], 0.5, color="#c44e52", label="of it fsync'd")
    bx.set_xticks(range(len(cuts)), [c.case for c in cuts], fontsize=8)
    bx.set_ylabel(f"MiB lost at a power cut at {CUT}")
    bx.legend()
    bx.set_title("4 KiB random writes, fsync after each")
    save(fig, Path(path))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--plot", default="seed000_mft.png")
    a = ap.parse_args(argv)
    data = reproduce(a.quick, a.seed)
    for t in trends(data):
        print(f"{'holds' if t.holds else 'FAILS':5}  {t.claim}\n       published: \"{t.published}\"; our reading: "
              f"{t.reading}\n       simulated: {t.evidence}")
    plot(data, a.plot)
    print(f"figure: {a.plot}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
