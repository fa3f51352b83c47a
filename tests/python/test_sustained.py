"""Sustained sequential write (seed 002's method) and the seed 002 experiment's plumbing."""

import json
import math
import os

import numpy as np
import pandas as pd
import pytest

import ssdlab
from ssdlab import ProfileError, load_profile
from ssdlab.experiments import seed002
from ssdlab.analysis.sustained import _analyse, cache_key, estimate_write_rate, sustained_summary, sustained_write

PROFILE = "samsung-850-pro"
SIZE = 2 * 1024**3


def link_and_nand_rate(name: str) -> float:
    """min(host link, native program bandwidth) from the profile, as docs/profile-format.md says."""
    p, _ = load_profile(name)
    link = p.interface.gbit_per_s * 1e9 / 10 * p.interface.efficiency  # SATA, 8b/10b
    n = p.nand
    nand = (n.channels * n.dies_per_channel * n.planes_per_die * n.page_size
            * n.program_pages / (n.program_time / 1e9))
    return min(link, nand)


@pytest.fixture(scope="module")
def sw():
    return sustained_write(PROFILE, size="2GiB")


def test_rates_match_the_sata_link(sw):
    expected = link_and_nand_rate(PROFILE)
    assert expected == pytest.approx(550e6, rel=0.01)  # 6 Gb/s, 8b/10b, 91.7 % payload
    for rate in (sw.burst_rate, sw.after_cache_rate, sw.overwrite_rate, sw.worst_sustained_rate, sw.mean_rate):
        assert rate == pytest.approx(expected, rel=0.02)
    assert sw.worst_sustained_rate <= min(sw.after_cache_rate, sw.overwrite_rate) * 1.0001
    assert sw.cache_bytes is None  # no SLC cache, no drop
    assert sw.waf == pytest.approx(1.0, abs=0.01)  # a sequential stream


def test_time_series_conserves_bytes_and_phases(sw):
    ts = sw.timeseries
    assert 200 <= len(ts) <= 450
    assert sw.size_bytes == SIZE and sw.bytes_written == 2 * SIZE
    # Every byte is in exactly one interval: sum of rate x dt is what was written.
    assert (ts.write_bw_bytes * ts.dt_s).sum() == pytest.approx(sw.bytes_written, rel=1e-9)
    assert ts.bytes_written.iloc[-1] == sw.bytes_written
    assert ts.t_s.iloc[-1] == pytest.approx(sw.elapsed_s)
    assert np.all(np.diff(ts.t_s) > 0) and np.all(ts.dt_s > 0)
    assert np.allclose(ts.t_start_s + ts.dt_s, ts.t_s)
    assert np.all(np.diff(ts.bytes_written) >= 0)
    # Fill up to the drive size, overwrite after; one switch, about half the time each.
    assert list(ts.phase.unique()) == ["fill", "overwrite"]
    assert (ts[ts.phase == "fill"].bytes_written <= SIZE).all()
    assert (ts[ts.phase == "overwrite"].bytes_written > SIZE).all()
    share = (ts.phase == "fill").mean()
    assert 0.4 < share < 0.6
    # Only the end of the run may be a short interval.
    assert not ts.partial.iloc[:-2].any()


def test_summary_is_json_ready(sw):
    s = sw.summary()
    json.dumps(s, allow_nan=False)
    for key in ("burst_rate", "cache_bytes", "after_cache_rate", "overwrite_rate", "worst_sustained_rate",
                "waf", "bytes_written", "elapsed_s", "interval_s", "samples"):
        assert key in s


def test_single_pass_has_no_overwrite_and_explicit_interval():
    one = sustained_write(PROFILE, size="512MiB", passes=1, interval="20ms")
    assert math.isnan(one.overwrite_rate) and one.summary()["overwrite_rate"] is None
    assert set(one.timeseries.phase) == {"fill"}
    assert one.interval_s == pytest.approx(0.02)
    assert len(one.timeseries) == pytest.approx(one.elapsed_s / 0.02, abs=2)
    assert one.worst_sustained_rate == pytest.approx(550e6, rel=0.02)


def test_bad_arguments():
    with pytest.raises(ProfileError):
        sustained_write("no-such-drive", size="1GiB")
    with pytest.raises(ValueError, match="larger than the simulated drive"):
        sustained_write(PROFILE, size="10TB")
    with pytest.raises(ValueError, match="block size"):
        sustained_write(PROFILE, size="1GiB", block_size=1000)
    with pytest.raises(ValueError, match="passes"):
        sustained_write(PROFILE, size="1GiB", passes=0)


# ---- reading rates off a time series (synthetic: the SLC-cache shapes of seed 002) ---------

def series(rates_gbps, dt=4.0, size=None):
    rows, b, t = [], 0.0, 0.0
    for r in rates_gbps:
        b += r * 1e9 * dt
        rows.append({"t_start_s": t, "t_s": t + dt, "dt_s": dt, "write_bw_bytes": r * 1e9, "bytes_written": b})
        t += dt
    df = pd.DataFrame(rows)
    size = size if size is not None else b
    df["phase"] = np.where(df.bytes_written <= size * (1 + 1e-12), "fill", "overwrite")
    df["partial"] = False
    return df


def test_cache_drop_is_found_and_located():
    # 2.75 GB/s until 42 GB are written, then 1.6 GB/s: the 970 EVO Plus of seed 002.
    dt, cache, burst, after = 4.0, 42e9, 2.75, 1.6
    t_drop = cache / (burst * 1e9)
    rates = []
    for i in range(300):
        t0 = i * dt
        fast = min(max(t_drop - t0, 0.0), dt)
        rates.append((fast * burst + (dt - fast) * after) / dt)
    b, c, a, _, w = _analyse(series(rates, dt), 0.15)
    assert b == pytest.approx(burst * 1e9, rel=1e-6)
    assert c == pytest.approx(cache, rel=1e-6)
    assert a == pytest.approx(after * 1e9, rel=1e-6)
    assert w == pytest.approx(after * 1e9, rel=1e-6)


def test_write_buffer_transient_is_not_the_cache():
    # Short intervals: the DRAM buffer (16 MiB) fills at link speed for ~70 MB first; the SLC
    # cache (2 GB here) is the drop that counts.
    dt = 0.005
    rates = [3.54] * 4 + [2.75] * 146 + [1.6] * 150
    b, c, a, _, w = _analyse(series(rates, dt), 0.15, buffer_bytes=16 * 2**20)
    assert b == pytest.approx(2.75e9) and a == pytest.approx(1.6e9)
    assert c == pytest.approx((4 * 3.54 + 146 * 2.75) * 1e9 * dt, rel=0.01)


def test_short_dips_are_not_a_cache():
    # Mostly 1.7 GB/s with one-interval dips to 1.3 GB/s (the PM1725b): no cache, worst ~1.3.
    rates = [1.3 if i % 10 == 5 else 1.7 for i in range(300)]
    b, c, a, o, w = _analyse(series(rates, size=sum(rates[:150]) * 4e9), 0.15)
    assert c is None
    assert b == pytest.approx(1.7e9) and a == pytest.approx(1.7e9) and o == pytest.approx(1.7e9)
    assert w == pytest.approx(1.3e9)


# ---- the on-disk cache -------------------------------------------------------------------

def test_summary_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    first = sustained_summary(PROFILE, size="256MiB")
    second = sustained_summary(PROFILE, size="256MiB")
    assert first["cached"] is False and second["cached"] is True
    assert {k: v for k, v in first.items() if k != "cached"} == {k: v for k, v in second.items() if k != "cached"}
    entries = list((tmp_path / "ssdlab" / "sustained").glob("*.json"))
    assert [e.stem for e in entries] == [cache_key(PROFILE, size="256MiB")]
    other = sustained_summary(PROFILE, size="256MiB", block_size="64k")  # other options, other entry
    assert other["cached"] is False and other["block_size"] == 65536
    assert sustained_summary(PROFILE, use_cache=False, size="256MiB")["cached"] is False


_SUMMARY = {"profile": PROFILE, "size_bytes": 1 << 28, "passes": 2.0, "block_size": 131072, "iodepth": 32, "seed": 0,
            "burst_rate": 2e9, "cache_bytes": None, "cache_bytes_drive": None, "after_cache_rate": 1.5e9,
            "overwrite_rate": 1.4e9, "worst_sustained_rate": 1.3e9, "mean_rate": 1.45e9, "bytes_written": 1 << 29,
            "elapsed_s": 0.37, "nand_bytes_written": 1 << 29, "waf": 1.0, "throttled_share": None,
            "interval_s": 0.001, "samples": 300, "scale": 1.0}


@pytest.mark.parametrize("damage", ["{}", "[1, 2]", '{"profile": 1}', "", '{"profile": "x"',
                                    json.dumps({**_SUMMARY, "worst_sustained_rate": "fast"}),
                                    json.dumps({**_SUMMARY, "waf": float("nan")}),
                                    json.dumps({**_SUMMARY, "extra": 1})])
def test_a_damaged_cache_entry_is_computed_again(tmp_path, monkeypatch, damage):
    from ssdlab.analysis import sustained

    class Ran:
        def summary(self):
            runs.append(1)
            return dict(_SUMMARY)

    runs: list[int] = []
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(sustained, "sustained_write", lambda profile, **options: Ran())
    assert sustained_summary(PROFILE, size="256MiB")["cached"] is False
    assert sustained_summary(PROFILE, size="256MiB") == {**_SUMMARY, "cached": True} and len(runs) == 1
    entry = tmp_path / "ssdlab" / "sustained" / f"{cache_key(PROFILE, size='256MiB')}.json"
    entry.write_text(damage)
    again = sustained_summary(PROFILE, size="256MiB")
    assert again == {**_SUMMARY, "cached": False} and len(runs) == 2
    assert json.loads(entry.read_text()) == _SUMMARY  # stored whole again


def _store_many(args):
    """In a worker process: store 150 made-up entries under keys of its own, as fast as it can."""
    cache_home, w = args
    import os

    os.environ["XDG_CACHE_HOME"] = cache_home
    from ssdlab.analysis import sustained

    key = sustained.cache_key(PROFILE, size="256MiB")
    for j in range(150):
        sustained._store(f"k{w}-{j:03d}", {"w": w, "j": j, "pad": "x" * 5_000})
    return key


def test_cache_is_safe_for_processes_writing_at_once_and_keyed_alike(tmp_path):
    import multiprocessing as mp

    with mp.get_context("spawn").Pool(4) as pool:
        keys = pool.map(_store_many, [(str(tmp_path), w) for w in range(4)])
    # Every worker computed the same key for the same run (content, not paths or mtimes) ...
    assert len(set(keys)) == 1
    # ... and no entry was lost or torn by the others.
    files = sorted((tmp_path / "ssdlab" / "sustained").glob("*.json"))
    assert len(files) == 600
    for f in files:
        d = json.loads(f.read_text())
        assert f.stem == f"k{d['w']}-{d['j']:03d}"
    assert not list((tmp_path / "ssdlab" / "sustained").glob("*.tmp"))


def test_the_cache_key_follows_the_model_not_the_file_time(monkeypatch):
    from ssdlab import _core
    from ssdlab.analysis import sustained

    before = cache_key(PROFILE, size="256MiB")
    os.utime(_core.__file__)  # a rebuilt or copied library with the same source
    assert cache_key(PROFILE, size="256MiB") == before
    monkeypatch.setattr(sustained, "_core_stamp", lambda: "0.1.0+other-source")
    assert cache_key(PROFILE, size="256MiB") != before


# ---- seed 002 experiment -----------------------------------------------------------------

def test_published_rates_and_error_rules():
    assert [d.drives_100g for d in seed002.PUBLISHED.values()] == [8, 6, 10, 6, 5]
    rng = seed002.Rate("burst_rate", "range", 2.7, 2.8)
    assert rng.error_pct(2.75) == 0 and rng.error_pct(2.6) == pytest.approx(100 * (2.6 / 2.7 - 1))
    assert rng.error_pct(3.08) == pytest.approx(10.0)
    at_least = seed002.Rate("worst_sustained_rate", "atleast", 3.2)
    assert at_least.error_pct(3.5) == 0 and at_least.error_pct(3.2) == 0
    assert at_least.error_pct(2.88) == pytest.approx(-10.0)
    assert seed002.Rate("after_cache_rate", "approx", 1.6).error_pct(1.76) == pytest.approx(10.0)


def test_missing_profile_is_reported_not_raised(sw, tmp_path):
    runs = seed002.simulate(["no-such-drive-xyz"], size="64MiB")
    assert runs["no-such-drive-xyz"].startswith("profile not available")
    # A published drive whose profile is missing, and one stood in for by the 850 PRO run.
    runs = {"samsung-970-evo-plus-1tb": "profile not available: unknown profile", "samsung-970-pro-512": sw}
    table = seed002.reproduce(list(runs), runs=runs)
    evo = table[table.drive == "samsung-970-evo-plus-1tb"]
    assert (evo.status == "profile not available").all() and evo.simulated.isna().all()
    pro = table[table.drive == "samsung-970-pro-512"].set_index("quantity")
    assert (pro.status == "ok").all()
    assert pro.loc["after_cache_rate", "simulated"] == pytest.approx(0.55, rel=0.02)
    assert pro.loc["after_cache_rate", "error"] == pytest.approx(100 * (0.55 / 2.2 - 1), abs=1.5)
    assert pro.loc["drives_100g", "simulated"] == math.ceil(12.5 / sw.worst_sustained_rate * 1e9)
    path = tmp_path / "seed002.png"
    seed002.plot(runs, path)
    assert path.stat().st_size > 10_000


def test_experiment_main_runs_whatever_profiles_exist(tmp_path, capsys):
    assert seed002.main(["--drives", "samsung-970-pro-512", "--size", "64MiB", "--plot", str(tmp_path / "p.png")]) == 0
    out = capsys.readouterr().out
    assert "published vs simulated" in out and "samsung-970-pro-512" in out
    assert (tmp_path / "p.png").is_file()


def test_seed002_slc_drive_on_a_fraction_of_its_flash():
    """The 970 EVO Plus profile (seed 002): 2.7-2.8 GB/s until the SLC cache is full, then ~1.6,
    the same on overwrite. A 5 % fraction of the flash keeps this quick; rates carry over. The
    whole (scaled) drive is filled and overwritten, as in the paper: overwriting only a part that
    still sits in SLC frees those SLC blocks, and the cache takes writes again."""
    s = sustained_write("samsung-970-evo-plus-1tb", passes=2, scale=0.05)  # a built-in profile: must load
    assert 2.7e9 * 0.98 <= s.burst_rate <= 2.8e9 * 1.02
    assert s.cache_bytes is not None and s.scale < 1
    assert s.summary()["cache_bytes_drive"] == pytest.approx(s.cache_bytes / s.scale)
    assert s.after_cache_rate == pytest.approx(1.6e9, rel=0.05)
    assert s.overwrite_rate == pytest.approx(1.6e9, rel=0.05)


@pytest.mark.parametrize("name", ssdlab.profile_names())
def test_the_rate_estimate_covers_every_profile_kind(name):
    prof, _ = load_profile(name)
    rate = estimate_write_rate(prof)
    assert 5e7 < rate < 2e10, rate  # a 2008 MLC drive writes 70 MB/s
    if name == "intel-optane-905p-480":  # 7 channels x 320 MB/s is the narrowest part
        assert rate == pytest.approx(7 * 320e6)


def test_sustained_write_on_an_in_place_drive():
    r = sustained_write("intel-optane-905p-480", size="256MiB")
    assert r.burst_rate == pytest.approx(2.24e9, rel=0.05)  # 256 MiB: the queue-filling start counts
    assert r.waf == pytest.approx(1.0)
