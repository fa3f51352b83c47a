"""Thermal throttling: how a drive's sustained write rate depends on its cooling.

Two published observations, one model (docs/model.md, "Temperature and throttling"):

- TechPowerUp's Samsung 970 Pro 512 GB review (thermal page): in a case without a fan the
  drive starts throttling when SMART reports about 80 C, after ~150 s of writing at 2 GB/s
  (~300 GB), and its writes drop from 2.0 to 1.5 GB/s.
- Seed 002: the PM1725b wrote "mostly 1.7 GB/s, with dips to 1.3" (the paper gives no cause).

Step 1 fits the one unknown of the 970 PRO's fanless set-up, the thermal resistance from drive
to air, to the 150 s onset (lumped model, closed form, with the profile's powers and heat
capacity and 35 C case air), then simulates with it. The onset is a fit, so it matches by
construction; what the simulation adds is the bytes written by then and the throttled rate.

Step 2 runs the PM1725b for the length of seed 002's fill and overwrite under several assumed
coolings. Its throttle level (0.75) is not fitted to seed 002: it is the 970 Pro's measured
step, so the dip depth is a prediction. Whether dips happen at all depends on the cooling;
the sweep shows the narrow band in which the drive dips and recovers, as seed 002 saw.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import pandas as pd

from ..api import run
from ..config import load_profile
from ..plotting import pyplot, save
# TechPowerUp's onset and level, seed 002's PM1725b rates.
from ..reference import SEED002_DIP, SEED002_FULL, TPU_LEVEL, TPU_ONSET_BYTES, TPU_ONSET_S

GB = 1e9
TPU_CASE_AIR_C = 35.0     # assumed: air around an M.2 slot in a desktop case under load

JOB = "[w]\nrw=write\nbs=1M\niodepth=32\nioengine=libaio\ndirect=1\ntime_based\nruntime={runtime}\n"


def onset_time(r_k_per_w: float, *, c_j_per_k: float, idle_w: float, load_w: float,
               ambient_c: float, throttle_c: float) -> float:
    """Seconds from idle equilibrium to the throttle point under constant `load_w` (inf if the
    drive never gets there)."""
    t0 = ambient_c + idle_w * r_k_per_w
    t_ss = ambient_c + load_w * r_k_per_w
    if t_ss <= throttle_c:
        return math.inf
    return c_j_per_k * r_k_per_w * math.log((t_ss - t0) / (t_ss - throttle_c))


def fit_resistance(target_s: float, **lump: float) -> float:
    """Thermal resistance whose onset time is `target_s` (bisection: onset falls as R grows)."""
    lo = (lump["throttle_c"] - lump["ambient_c"]) / lump["load_w"] * (1 + 1e-9)
    hi = 100.0
    if onset_time(hi, **lump) > target_s:
        raise ValueError("no thermal resistance reaches the throttle point that fast")
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if onset_time(mid, **lump) > target_s:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def _write_run(profile: str, runtime_s: float, interval_s: float, scale: float, overrides: dict[str, str]):
    r = run(JOB.format(runtime=runtime_s), profile=profile, scale=scale, interval=f"{interval_s}s",
            profile_set=overrides)
    return r, r.timeseries_table()


def fanless_970pro(runtime_s: float = 300.0) -> tuple[dict, pd.DataFrame]:
    """Step 1: fit the fanless case's thermal resistance to the onset, then simulate it."""
    profile = "samsung-970-pro-512"
    th = load_profile(profile)[0].thermal
    # The die utilisation of an unthrottled sequential write sets the power the fit uses.
    probe, _ = _write_run(profile, 5.0, 1.0, 0.05, {})
    load_w = th.idle_power + (th.active_power - th.idle_power) * probe.internal()["internal_utilization"]
    lump = dict(c_j_per_k=th.heat_capacity, idle_w=th.idle_power, load_w=load_w,
                ambient_c=TPU_CASE_AIR_C, throttle_c=th.throttle_temperature)
    r_fit = fit_resistance(TPU_ONSET_S, **lump)
    res, ts = _write_run(profile, runtime_s, 1.0, 1.0, {"thermal.thermal_resistance": f"{r_fit:.4f}",
                                                        "thermal.ambient_temperature": str(TPU_CASE_AIR_C)})
    hot = ts[ts.throttled_fraction > 0]
    onset = float(hot.t_s.iloc[0] - 1.0 + (1.0 - hot.throttled_fraction.iloc[0])) if len(hot) else math.nan
    written = float((ts.write_bw_bytes * 1.0)[ts.t_s <= onset].sum()) if len(hot) else math.nan
    full = float(ts[(ts.throttled_fraction == 0) & (ts.t_s > 1) & (ts.t_s < onset)].write_bw_bytes.median())
    slow = float(hot[hot.throttled_fraction == 1].write_bw_bytes.median())
    row = {"fitted_resistance_k_per_w": r_fit, "power_w": load_w, "onset_s": onset, "written_GB": written / GB,
           "full_GBps": full / GB, "throttled_GBps": slow / GB, "level": slow / full}
    return row, ts


def pm1725b_cooling(resistances: list[float], runtime_s: float = 1880.0) -> tuple[pd.DataFrame, dict[float, pd.DataFrame]]:
    """Step 2: the PM1725b through seed 002's fill + overwrite time under several coolings.
    A time-based sequential stream on 1/16 of the flash (rates carry over; a sequential
    overwrite costs what the fill did) keeps the thermal clock in real time."""
    profile = "samsung-pm1725b-1.6tb"
    rows, series = [], {}
    for rk in resistances:
        res, ts = _write_run(profile, runtime_s, 10.0, 1 / 16, {"thermal.thermal_resistance": str(rk)})
        steady = ts[ts.t_s > 10]
        i = res.internal()
        rows.append({"resistance_k_per_w": rk, "max_temp_c": i["max_temperature_c"],
                     "throttled_share": i["throttled_s"] / (res.elapsed_ns / 1e9),
                     "throttle_spells": i["throttle_events"],
                     "median_GBps": float(steady.write_bw_bytes.median()) / GB,
                     "p5_GBps": float(steady.write_bw_bytes.quantile(0.05)) / GB,
                     "mean_GBps": float(steady.write_bw_bytes.mean()) / GB})
        series[rk] = ts
    return pd.DataFrame(rows), series


def published_vs_simulated(tpu: dict, cooling: pd.DataFrame, profile_r: float) -> pd.DataFrame:
    at = cooling.set_index("resistance_k_per_w").loc[profile_r]
    rows = [
        ("970 Pro fanless: onset (s) [fitted]", TPU_ONSET_S, tpu["onset_s"]),
        ("970 Pro fanless: written by onset (GB)", TPU_ONSET_BYTES / GB, tpu["written_GB"]),
        ("970 Pro fanless: throttled / full rate [profile input]", TPU_LEVEL, tpu["level"]),
        ("PM1725b (profile cooling): usual rate (GB/s)", SEED002_FULL / GB, at.median_GBps),
        ("PM1725b (profile cooling): dip rate (GB/s)", SEED002_DIP / GB, at.p5_GBps),
    ]
    return pd.DataFrame([{"quantity": q, "published": p, "simulated": s, "error_%": 100 * (s - p) / p}
                         for q, p, s in rows])


def plot(tpu_ts: pd.DataFrame, series: dict[float, pd.DataFrame], path: Path) -> None:
    plt = pyplot()
    fig, (a, b) = plt.subplots(1, 2, figsize=(12, 4))
    a.plot(tpu_ts.t_s, tpu_ts.write_bw_bytes / GB, label="write rate (GB/s)")
    a2 = a.twinx()
    a2.plot(tpu_ts.t_s, tpu_ts.temperature_c, "r-", lw=0.8, label="temperature (C)")
    a.axvline(TPU_ONSET_S, color="k", ls=":", lw=0.8, label="published onset (150 s)")
    a.set(xlabel="time (s)", ylabel="GB/s", title="970 PRO, fanless case (fitted cooling)")
    a2.set_ylabel("C")
    a.legend(loc="lower left")
    for rk, ts in series.items():
        b.plot(ts.t_s, ts.write_bw_bytes / GB, lw=0.9, label=f"R = {rk} K/W")
    b.axhline(SEED002_DIP / GB, color="k", ls=":", lw=0.8, label="seed 002 dips (1.3)")
    b.set(xlabel="time (s)", ylabel="GB/s", title="PM1725b through seed 002's fill + overwrite")
    b.legend(loc="lower left", fontsize=8)
    save(fig, path)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--resistances", type=float, nargs="+", default=None,
                    help="PM1725b drive-to-air thermal resistances to try, K/W (default: around the profile's)")
    ap.add_argument("--runtime", type=float, default=1880.0, help="PM1725b simulated seconds (seed 002: ~1880)")
    ap.add_argument("--plot", type=Path, default=Path("out/thermal.png"))
    args = ap.parse_args(argv)
    profile_r = load_profile("samsung-pm1725b-1.6tb")[0].thermal.thermal_resistance
    resistances = sorted(set(args.resistances or [1.6, profile_r, 2.2]) | {profile_r})
    tpu, tpu_ts = fanless_970pro()
    cooling, series = pm1725b_cooling(resistances, args.runtime)
    with pd.option_context("display.width", 160, "display.float_format", "{:.3f}".format):
        print("970 PRO in a fanless case (thermal resistance fitted to the published onset):")
        print(pd.Series(tpu).to_string())
        print("\nPM1725b sequential write for seed 002's fill + overwrite time, by cooling:")
        print(cooling.to_string(index=False))
        print("\nPublished vs simulated:")
        print(published_vs_simulated(tpu, cooling, profile_r).to_string(index=False))
    plot(tpu_ts, series, args.plot)
    print(f"plot: {args.plot}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
