"""Seed 001 — Lee & Shin, "Performance Analysis on SSD RAID Device" (KIISE 2012;
http://www.dbpia.co.kr/Article/NODE01901539).

Hardware RAID 5 (Adaptec 6805, 512 MB cache, read and write cache on) of Samsung SSD 830
64 GB, Iometer on Windows 7; SSD count 3-6, stripe (chunk) 16 KB-1 MB, request 8-256 KB,
outstanding I/Os ("NCQ") 1-128. The paper gives trends, not figures; each is checked here on
the simulator's own runs, and the four figures are drawn.

Iometer's random offsets are aligned to sectors, as here (fio ``blockalign=512``). Writes run
long enough for the 512 MB cache to fill first (``ramp_time``), so the rate measured is the
controller's steady destage rate, as in a long Iometer run. Figure 4 repeats figure 2's method
for writes ("the same way as 4.2", section 4.4): 128 KB requests at NCQ 16.
"""

from __future__ import annotations

import argparse
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ..api import run
from ..plotting import pyplot, save
from ..reference import SEED001_WORST_WRITE_SHARE
from ..system import raid

PROFILE = "samsung-830-64gb"
ENGINE = "adaptec-6805"
KIB = 1024


def measure(rw: str, *, ssds: int = 3, stripe_kib: int = 128, request_kib: int = 128, ncq: int = 16,
            seed: int = 0, ramp_s: float | None = None, runtime_s: float = 1.0,
            engine_set: dict[str, str] | None = None, carry_states: str | Path | None = None,
            precondition: str | None = None) -> float:
    """Throughput in MB/s of one Iometer-like random read or write run (``engine_set``:
    controller settings other than the profile's; ``precondition``: the members' state, fresh
    by default; ``carry_states``: the members start from the states the last run with this
    directory left, and leave theirs there)."""
    if ramp_s is None:
        ramp_s = 5.0 if rw == "randwrite" else 0.0
    job = (f"[t]\nrw={rw}\nbs={request_kib}k\niodepth={ncq}\nioengine=libaio\ndirect=1\nblockalign=512\ntime_based\n"
           f"ramp_time={ramp_s}\nruntime={runtime_s}\n")
    r = run(job, system=raid(PROFILE, level=5, drives=ssds, chunk=f"{stripe_kib}k", engine=ENGINE,
                             engine_set=engine_set, precondition=precondition), seed=seed, carry_states=carry_states)
    return r.to_pandas().bw_bytes.sum() / 1e6


def _rising(s: pd.Series, tolerance: float = 0.02) -> bool:
    """Never falls by more than ``tolerance`` from one point to the next (flat counts)."""
    v = list(s)
    return all(b >= a * (1 - tolerance) for a, b in zip(v, v[1:]))


@dataclass
class Trend:
    figure: str
    claim: str
    holds: bool
    evidence: str


#: What the drives carry from point to point (``carry_state``) depends on the order the points
#: ran in, which the paper does not give. Assumed: its sections' order (figures 1 to 4);
#: within figures 1 and 3, Iometer's own: one access specification per request size, each
#: run through the queue depths (Iometer's "Cycle # Outstanding I/Os"); within figures 2 and
#: 4, the array re-created for each stripe, SSD counts ascending and stripes ascending
#: within a count (adding drives is the slower change). Re-creating an array leaves what the
#: drives hold (no TRIM through the controller; assumed), so member sdX keeps its state.
ORDER = "figures 1-4; request size outer, NCQ inner; SSD count outer, stripe inner"


def sweep(quick: bool = False, seed: int = 0, carry_state: bool = False,
          start: str | None = None) -> dict[str, pd.DataFrame]:
    """The four figures' data (``quick``: fewer points, for tests). Each point runs on drives
    in the state ``start`` leaves (a precondition, e.g. ``"sequential"``; default fresh), or
    with ``carry_state`` on the drives the points before it used, in the paper's order
    (``ORDER``), ``start`` their state before the first."""
    ncqs = [1, 4, 16, 64] if quick else [1, 2, 4, 8, 16, 32, 64, 128]
    sizes = [8, 32, 128, 256] if quick else [8, 16, 32, 64, 128, 256]
    stripes = [16, 64, 256, 1024] if quick else [16, 32, 64, 128, 256, 512, 1024]
    counts = [3, 6] if quick else [3, 4, 5, 6]
    wsizes = [8, 32, 64, 128, 256] if quick else [8, 16, 32, 48, 64, 96, 128, 192, 256]
    wncqs = [1, 16] if quick else [1, 16, 128]
    with tempfile.TemporaryDirectory(prefix="ssdlab-seed001-") as states:
        carry = states if carry_state else None
        if start is not None and carry is not None:
            # Carried: the drives take `start` once, before the first point. (Not carried,
            # each point is preconditioned to `start` on its own.)
            _prepare(max(counts), start, seed, carry)

        def m(rw: str, **kw) -> float:
            return measure(rw, seed=seed, carry_states=carry, precondition=None if carry_state else start, **kw)

        read = pd.DataFrame([{"ncq": q, "request_kib": s, "mbps": m("randread", request_kib=s, ncq=q)}
                             for s in sizes for q in ncqs])
        read_stripe = pd.DataFrame([{"ssds": n, "stripe_kib": st, "mbps": m("randread", ssds=n, stripe_kib=st)}
                                    for n in counts for st in stripes])
        write = pd.DataFrame([{"ncq": q, "request_kib": s, "mbps": m("randwrite", request_kib=s, ncq=q)}
                              for s in wsizes for q in wncqs])
        write_stripe = pd.DataFrame([{"ssds": n, "stripe_kib": st, "mbps": m("randwrite", ssds=n, stripe_kib=st)}
                                     for n in counts for st in stripes])
    return {"read": read, "read_stripe": read_stripe, "write": write, "write_stripe": write_stripe}


def _prepare(ssds: int, start: str, seed: int, carry: str | Path) -> None:
    """Leave ``ssds`` drives in the state ``start`` (a precondition) in ``carry``."""
    job = "[p]\nrw=read\nbs=4k\nsize=4k\nioengine=libaio\ndirect=1\n"
    run(job, system=raid(PROFILE, level=5, drives=ssds, chunk="128k", engine=ENGINE, precondition=start),
        seed=seed, carry_states=carry)


def trends(d: dict[str, pd.DataFrame]) -> list[Trend]:
    out = []
    r = d["read"].pivot(index="ncq", columns="request_kib", values="mbps")
    big = r[r.columns.max()]
    out.append(Trend("1", "random read grows with outstanding I/Os and request size",
                     bool(_rising(r.iloc[-1]) and _rising(big) and r.values.max() > 2 * r.values.min()),
                     f"{r.iloc[0].min():.0f} -> {r.values.max():.0f} MB/s"))
    top = r.values.max()
    out.append(Trend("1", "then flattens at the controller's ceiling",
                     bool(big.iloc[-1] < 1.1 * big.iloc[-2] and big.iloc[-1] > 0.8 * top),
                     f"largest requests at the two deepest queues: {big.iloc[-2]:.0f}, {big.iloc[-1]:.0f} MB/s"))
    rs = d["read_stripe"].pivot(index="stripe_kib", columns="ssds", values="mbps")
    out.append(Trend("2", "random read (128 KB, NCQ 16) grows with stripe size",
                     bool(all(_rising(rs[c]) for c in rs) and rs.iloc[-1].mean() > 1.05 * rs.iloc[0].mean()),
                     f"{rs.iloc[0].mean():.0f} -> {rs.iloc[-1].mean():.0f} MB/s"))
    spread = (rs.max(axis=1) / rs.min(axis=1) - 1).max()
    out.append(Trend("2", "random read does not change with SSD count", bool(spread < 0.1),
                     f"largest spread over SSD counts {100 * spread:.1f} %"))
    w = d["write"].pivot(index="request_kib", columns="ncq", values="mbps")
    out.append(Trend("3", "random write far below random read", bool(w.values.max() < 0.5 * top),
                     f"write at most {w.values.max():.0f} MB/s, read {top:.0f}"))
    qspread = (w.max(axis=1) / w.min(axis=1) - 1).max()
    out.append(Trend("3", "outstanding I/Os do not change random write", bool(qspread < 0.15),
                     f"largest spread over NCQ {100 * qspread:.1f} %"))
    col = w[w.columns.min()]
    worst = col.idxmin()
    out.append(Trend("3", "random write falls as requests grow to the stripe size, then rises",
                     bool(col.index.min() < worst < col.index.max() and col.loc[:worst].is_monotonic_decreasing),
                     f"lowest at {worst} KB requests ({col.min():.0f} MB/s) with a 128 KB stripe"))
    # "About half": within a factor 1.5 of the published share (48-96 KB of a 128 KB stripe).
    half = SEED001_WORST_WRITE_SHARE * 128
    ws = d["write_stripe"].pivot(index="stripe_kib", columns="ssds", values="mbps")
    out.append(Trend("3", "the worst random write is at requests of about half the stripe",
                     bool(half / 1.5 <= worst <= half * 1.5),
                     f"worst at {worst} KB of a 128 KB stripe (figure 4, 128 KB requests: worst at "
                     f"{ws.mean(axis=1).idxmin()} KB stripes)"))
    out.append(Trend("4", "random write grows a little with more SSDs",
                     bool((ws[ws.columns.max()] >= ws[ws.columns.min()]).all()),
                     f"{ws[ws.columns.min()].mean():.0f} -> {ws[ws.columns.max()].mean():.0f} MB/s"))
    first, last = ws.iloc[0].mean(), ws.iloc[-1].mean()
    out.append(Trend("4", "random write falls slowly with larger stripes", bool(last < first and last > 0.5 * first),
                     f"{first:.0f} -> {last:.0f} MB/s from {ws.index.min()} to {ws.index.max()} KB stripes"))
    return out


def strip_contrast(seed: int = 0) -> pd.DataFrame:
    """Figures 3 and 4 (3 SSDs) with a controller that destages whole strips (``rmw_unit =
    "strip"``) beside the profile's: the other reading of how the controller could update
    parity, for comparison with the paper's shapes."""
    rows = []
    for unit in ("sector", "strip"):
        es = {"rmw_unit": unit}
        rows += [{"figure": "3", "rmw_unit": unit, "request_kib": r, "stripe_kib": 128,
                  "mbps": measure("randwrite", request_kib=r, engine_set=es, seed=seed)} for r in (8, 32, 64, 128, 256)]
        rows += [{"figure": "4", "rmw_unit": unit, "request_kib": 128, "stripe_kib": st,
                  "mbps": measure("randwrite", stripe_kib=st, engine_set=es, seed=seed)} for st in (16, 64, 256, 1024)]
    return pd.DataFrame(rows)


#: One look per series of a panel. The first is drawn wide, pale and hollow, so that a series
#: on top of it stays seen: figure 2's SSD counts and figure 3's queue depths give the same
#: rates, and their lines lie on each other.
STYLES = ({"marker": "o", "ls": "-", "ms": 12, "mfc": "none", "mew": 2, "lw": 4, "alpha": 0.5},
          {"marker": "s", "ls": "--", "ms": 6, "lw": 1.8},
          {"marker": "^", "ls": ":", "ms": 7, "lw": 2},
          {"marker": "D", "ls": "-.", "ms": 5, "lw": 1.5},
          {"marker": "v", "ls": "--", "ms": 6, "lw": 1.2},
          {"marker": "x", "ls": ":", "ms": 7, "lw": 1.2})
NAMES = {"ncq": "NCQ (outstanding I/Os)", "request_kib": "request (KB)", "stripe_kib": "stripe (KB)", "ssds": "SSDs"}


def plot(d: dict[str, pd.DataFrame], path: Path) -> None:
    save(figure(d), path)


def figure(d: dict[str, pd.DataFrame]):
    """The paper's four figures, simulated, as one matplotlib figure."""
    from matplotlib.ticker import NullLocator

    from ..plotting import from_zero, plain

    plt = pyplot()
    fig, axes = plt.subplots(2, 2, figsize=(13, 9))
    for (key, x, series, title), ax in zip([
        ("read", "ncq", "request_kib", "1. random read, 3 SSDs, 128 KB stripe"),
        ("read_stripe", "stripe_kib", "ssds", "2. random read, 128 KB, NCQ 16"),
        ("write", "request_kib", "ncq", "3. random write, 3 SSDs, 128 KB stripe"),
        ("write_stripe", "stripe_kib", "ssds", "4. random write, 128 KB, NCQ 16"),
    ], axes.flat):
        for (value, g), style in zip(d[key].groupby(series), STYLES * 2):
            ax.plot(g[x], g.mbps, label=f"{value:g}", color=f"C{len(ax.lines)}", **style)
        xs = sorted(d[key][x].unique())
        ax.set(xscale="log", xlabel=NAMES[x], ylabel="MB/s")
        ax.set_title(title, fontsize=12)
        # Ticks at the points measured, as plain numbers (not 10^1 or 2×10^0).
        ax.set_xticks(xs, [plain(v) for v in xs])
        ax.xaxis.set_minor_locator(NullLocator())
        ax.grid(True, alpha=0.3)
        from_zero(ax, headroom=0.15)  # the lines at the top (figure 2's) stay off the frame
        ax.legend(title=NAMES[series], loc="lower right", fontsize=10, title_fontsize=10)
    fig.suptitle("Seed 001: hardware RAID 5 of Samsung 830s (simulated)", fontsize=13)
    return fig


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer points")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--plot", type=Path, default=Path("seed001_raid5.png"))
    ap.add_argument("--carry-state", action="store_true",
                    help="run the points in the paper's order on drives that keep their state from point to point")
    ap.add_argument("--start", metavar="PRECONDITION",
                    help="the drives' state before each point, or with --carry-state before the first "
                         "(e.g. sequential, random:1; default fresh)")
    args = ap.parse_args(argv)
    data = sweep(args.quick, args.seed, carry_state=args.carry_state, start=args.start)
    table = pd.DataFrame([t.__dict__ for t in trends(data)])
    with pd.option_context("display.width", 160, "display.max_colwidth", 80):
        print(table.to_string(index=False))
    plot(data, args.plot)
    print(f"figures: {args.plot}")
    if not args.quick:
        c = strip_contrast(args.seed)
        print("\nrandom write (MB/s, 3 SSDs) if the controller destaged whole strips:")
        print(c.pivot_table(index=["figure", "request_kib", "stripe_kib"], columns="rmw_unit", values="mbps")
              .round(0).to_string())
    if not table.holds.all():
        raise SystemExit(1)
