"""Sizing and endurance: the arithmetic (seed 002's examples) and the `size`/`endurance` commands."""

import ast
import json
import math
from pathlib import Path

import pytest

from ssdlab import load_profile
from ssdlab.analysis import sizing
from ssdlab.reference import (
    SEED002_DWPD_OVERWRITES,
    SEED002_EXAMPLE_CAPACITY,
    SEED002_EXAMPLE_DRIVES,
    SEED002_EXAMPLE_LIFETIME_YEARS,
    SEED002_EXAMPLE_RETENTION_S,
)
from ssdlab.reference import SEED002_PUBLISHED as PUBLISHED

TARGET = 12.5e9  # 100 Gb/s
# Seed 002's measured rates a recorder can count on (GB/s): the 970 EVO Plus after its SLC
# cache, the 970 PRO flat, the PM1725b at its dips, the Optane and the D7-P5510 at their floor.
SEED_RATES = {
    "samsung-970-evo-plus-1tb": 1.6,
    "samsung-970-pro-512": 2.2,
    "samsung-pm1725b-1.6tb": 1.3,
    "intel-optane-905p-480": 2.2,
    "intel-d7-p5510-3.84tb": 3.2,
}


# ---- pure functions ----------------------------------------------------------------------

def test_drives_for_rate():
    assert sizing.drives_for_rate(TARGET, 3.125e9, 0.0) == 4  # exact: no float noise rounding up
    assert sizing.drives_for_rate(TARGET, 1.6e9, 0.0) == 8  # 7.8 -> 8
    assert sizing.drives_for_rate(TARGET, 1.6e9, 0.1) == 9  # 12.5 / 1.44 = 8.7
    assert sizing.drives_for_rate(0.0, 1e9) == 0
    for bad in (dict(drive_rate=0.0), dict(drive_rate=1e9, margin=1.0), dict(drive_rate=1e9, margin=-0.1)):
        with pytest.raises(ValueError):
            sizing.drives_for_rate(TARGET, **bad)


def test_seed002_drive_counts_from_the_seeds_rates():
    counts = {n: sizing.drives_for_rate(TARGET, r * 1e9, 0.0) for n, r in SEED_RATES.items()}
    seed = {n: d.drives_100g for n, d in PUBLISHED.items()}
    assert seed == {"samsung-970-evo-plus-1tb": 8, "samsung-970-pro-512": 6, "samsung-pm1725b-1.6tb": 10,
                    "intel-optane-905p-480": 6, "intel-d7-p5510-3.84tb": 5}
    # ceil(12.5 / rate) gives the seed's count for four drives; the D7-P5510 needs 4, the seed says 5.
    assert counts == {**seed, "intel-d7-p5510-3.84tb": 4}
    # No single margin gives all five: 8 x 1.6 and 4 x 3.2 both carry exactly 2.34 % headroom.
    for m in (0.0, 0.02, 0.03, 0.05, 0.1):
        got = {n: sizing.drives_for_rate(TARGET, r * 1e9, m) for n, r in SEED_RATES.items()}
        assert got != seed
    # So the answer explains itself when it differs, and says so when it matches.
    for name, rate in SEED_RATES.items():
        for margin in (0.0, 0.1):
            n = sizing.drives_for_rate(TARGET, rate * 1e9, margin)
            n0 = sizing.drives_for_rate(TARGET, rate * 1e9, 0.0)
            note = sizing.seed002_note(name, TARGET, n, n0, rate * 1e9, margin)
            if n == seed[name]:
                assert f"the rate needs {n} drives, matching seed 002's {seed[name]}" in note
            else:
                assert f"seed 002 recommends {seed[name]} drives" in note and f"the rate needs {n} here" in note
                assert f"(without the margin: {n0})" in note
    assert sizing.seed002_note("samsung-850-pro", TARGET, 9, 8, 1.6e9, 0.1) is None
    assert sizing.seed002_note("samsung-970-evo-plus-1tb", 2 * TARGET, 9, 8, 1.6e9, 0.1) is None


#: The one import of the experiments allowed outside them: the reproduction gallery runs
#: them by design, and loads their catalogue only when `ssdlab reproduce` asks for it.
GALLERY_LOADER = ("gallery/registry.py", "..experiments.catalog")


def test_product_code_never_imports_an_experiment():
    # Published figures come from ssdlab.reference: an experiment can change or go without
    # breaking `ssdlab size`.
    package = Path(sizing.__file__).parents[1]  # ssdlab
    scanned, offenders = set(), []
    for path in package.rglob("*.py"):
        rel = path.relative_to(package)
        if rel.parts[0] == "experiments":
            continue
        scanned.add(rel.as_posix())
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                names = [f"{node.module or ''}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            if isinstance(node, ast.ImportFrom) and (rel.as_posix(), "." * node.level + names[0]) == GALLERY_LOADER:
                continue
            if any("experiments" in n.split(".") for n in names):
                offenders.append(f"{rel}:{node.lineno}")
    assert {"analysis/sizing.py", "reference.py"} <= scanned  # the scan saw the package
    assert not offenders


def test_capacity_and_retention():
    # Seed 002: 12 x 30 TB hold about 8 h of 12.5 GB/s.
    assert sizing.retention_s(SEED002_EXAMPLE_DRIVES, SEED002_EXAMPLE_CAPACITY, TARGET) == pytest.approx(
        SEED002_EXAMPLE_RETENTION_S)
    assert sizing.drives_for_capacity(TARGET, 8 * 3600, 30e12) == 12
    assert sizing.drives_for_capacity(TARGET, 8 * 3600 + 1, 30e12) == 13
    s = sizing.size_array(TARGET, 8 * 3600, 1.6e9, 30e12, margin=0.1)
    assert (s["drives_for_rate"], s["drives_for_capacity"], s["drives"], s["limited_by"]) == (9, 12, 12, "capacity")
    s = sizing.size_array(TARGET, 3600, 1.6e9, 30e12, margin=0.0)
    assert (s["drives"], s["limited_by"], s["drives_for_rate_no_margin"]) == (8, "rate", 8)
    assert s["headroom"] == pytest.approx(8 * 1.6 / 12.5 - 1)


def test_seed002_lifetime_example():
    # 12 x 30 TB at 1 DWPD (5-year warranty), overwritten every 8 h by 12.5 GB/s:
    # 3 drive writes a day against 1 rated -> 5 y / 3 = 1.67 y ("a little over 1.5 years").
    e = sizing.endurance_from_dwpd(1, 30e12, 5)
    assert e.basis == "dwpd" and not e.waf_applied
    assert e.host_bytes / 30e12 == pytest.approx(1825)
    assert e.host_bytes / 30e12 == pytest.approx(SEED002_DWPD_OVERWRITES, rel=0.02)  # "~1,800 full overwrites"
    assert sizing.drive_writes_per_day(TARGET, 12, 30e12) == pytest.approx(3.0)
    years = sizing.lifetime_years(e.host_bytes, sizing.bytes_per_drive_per_day(TARGET, 12))
    assert years == pytest.approx(5 / 3)
    assert SEED002_EXAMPLE_LIFETIME_YEARS < years < 1.8  # "a little over 1.5 years"
    assert sizing.lifetime_years(e.host_bytes, sizing.bytes_per_drive_per_day(TARGET, 12, duty=0.5)) == pytest.approx(10 / 3)


def test_endurance_basis_order_and_waf():
    tbw = sizing.rated_endurance(1e12, tbw=600e12, dwpd=0.3, warranty_years=5, pe_cycles=3000, waf=3.0)
    assert (tbw.basis, tbw.host_bytes, tbw.waf_applied) == ("rated_tbw", 600e12, False)
    dw = sizing.rated_endurance(1e12, dwpd=0.3, warranty_years=5, pe_cycles=3000, waf=3.0)
    assert dw.basis == "dwpd" and dw.host_bytes == pytest.approx(0.3 * 1e12 * 365 * 5)
    pe = sizing.rated_endurance(1e12, pe_cycles=3000, flash_bytes=1.1e12, waf=3.0)
    assert pe.basis == "pe_cycles" and pe.waf_applied
    assert pe.host_bytes == pytest.approx(3000 * 1.1e12 / 3.0)  # host writes x WAF = NAND writes
    assert sizing.rated_endurance(1e12, pe_cycles=3000).host_bytes == pytest.approx(3000e12)
    with pytest.raises(ValueError):
        sizing.rated_endurance(1e12, dwpd=1.0)  # DWPD without a warranty says nothing
    assert sizing.lifetime_years(1e15, 0.0) == math.inf
    with pytest.raises(ValueError):
        sizing.bytes_per_drive_per_day(TARGET, 0)
    with pytest.raises(ValueError):
        sizing.bytes_per_drive_per_day(TARGET, 1, duty=1.5)


# ---- command line ------------------------------------------------------------------------

def cli_json(cli, *args, env=None):
    p = cli(*args, "--json", env=env)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def test_endurance_cli_seed002_example(cli):
    d = cli_json(cli, "endurance", "--capacity", "30TB", "--dwpd", "1", "--warranty-years", "5",
                 "--drives", "12", "--write-rate", "100Gb/s")
    assert d["years"] == pytest.approx(5 / 3, rel=1e-6)
    assert d["basis"] == "dwpd" and d["full_drive_writes"] == pytest.approx(1825)
    assert d["drive_writes_per_day"] == pytest.approx(3.0)
    assert d["waf_applied"] is False and d["pe_years"] is None
    assert "overwritten every 8 h" in d["note"]


def test_endurance_cli_profile(cli, tmp_path):
    p, _ = load_profile("samsung-850-pro")
    d = cli_json(cli, "endurance", "--profile", "samsung-850-pro", "--write-rate", "100MB/s", "--waf", "2")
    per_day = 100e6 * 86400
    assert d["basis"] == "rated_tbw" and d["years"] == pytest.approx(150e12 / per_day / 365)
    assert d["waf"] == 2 and d["waf_source"].startswith("given")
    assert d["pe_years"] == pytest.approx(6000 * p.raw_bytes / 2 / per_day / 365)
    # --waf auto simulates a sequential stream on the drive (a slice here, to be quick).
    d = cli_json(cli, "endurance", "--profile", "samsung-850-pro", "--write-rate", "100MB/s",
                 "--sim-size", "256MiB", env={"XDG_CACHE_HOME": str(tmp_path)})
    assert d["waf_source"].startswith("simulated") and d["waf"] == pytest.approx(1.0, abs=0.01)


def test_size_cli_with_a_given_rate(cli):
    d = cli_json(cli, "size", "--target", "100Gb/s", "--duration", "8h", "--capacity", "30TB",
                 "--drive-rate", "1.6GB/s", "--dwpd", "1", "--warranty-years", "5", "--margin", "0")
    assert (d["drives_for_rate"], d["drives_for_capacity"], d["drives"], d["limited_by"]) == (8, 12, 12, "capacity")
    assert d["lifetime_years"] == pytest.approx(5 / 3)
    assert d["raid"] == 0 and d["margin"] == 0 and "margin_policy" in d and d["note"]


def test_size_cli_simulates_and_caches(cli, tmp_path):
    env = {"XDG_CACHE_HOME": str(tmp_path)}
    args = ("size", "--target", "12.5GB/s", "--duration", "1h", "--profile", "samsung-850-pro",
            "--sim-size", "1GiB")
    first = cli_json(cli, *args, env=env)
    assert first["worst_sustained_rate"] == pytest.approx(550e6, rel=0.02)
    assert first["drives_for_rate"] == math.ceil(12.5e9 / (first["worst_sustained_rate"] * 0.9))
    assert first["drives"] == max(first["drives_for_rate"], first["drives_for_capacity"])
    for key in ("drives", "drives_for_rate", "drives_for_capacity", "margin_policy", "lifetime_years",
                "endurance_basis", "note", "burst_rate", "drive_writes_per_day"):
        assert key in first
    second = cli_json(cli, *args, env=env)
    assert first["cached"] is False and second["cached"] is True
    assert second["drives"] == first["drives"]
    p = cli(*args, env=env)  # the table form
    assert p.returncode == 0 and "drives (RAID 0)" in p.stdout and "margin policy" in p.stdout


BAD = {
    "raid 5": ["size", "--target", "100Gb/s", "--duration", "8h", "--profile", "samsung-850-pro", "--raid", "5"],
    "bad rate": ["size", "--target", "fast", "--duration", "8h", "--profile", "samsung-850-pro"],
    "bad duration": ["size", "--target", "100Gb/s", "--duration", "8 fortnights", "--profile", "samsung-850-pro"],
    "unknown profile": ["size", "--target", "100Gb/s", "--duration", "8h", "--profile", "no-such-drive"],
    "margin": ["size", "--target", "100Gb/s", "--duration", "8h", "--profile", "samsung-850-pro", "--margin", "1.5"],
    "no drive": ["size", "--target", "100Gb/s", "--duration", "8h"],
    "endurance bad waf": ["endurance", "--profile", "samsung-850-pro", "--write-rate", "1GB/s", "--waf", "lots"],
    "endurance no rating": ["endurance", "--capacity", "30TB", "--write-rate", "1GB/s"],
    "endurance bad rate": ["endurance", "--capacity", "30TB", "--dwpd", "1", "--warranty-years", "5",
                           "--write-rate", "12.5 GB"],
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_input_exits_2_with_one_line(cli, case):
    p = cli(*BAD[case])
    assert p.returncode == 2, (case, p.stdout, p.stderr)
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ssdlab: error:"), p.stderr
    assert "Traceback" not in p.stderr


def test_size_and_endurance_share_their_rating_and_simulation_options():
    # defined once (ssdlab.cli.sizing.shared_options): same flags, help and defaults in both
    from typer.main import get_command

    from ssdlab.cli import app

    commands = get_command(app).commands
    shared = ["dwpd", "warranty_years", "pe_cycles", "passes", "block_size", "iodepth", "sim_size", "seed",
              "no_cache", "json_out"]

    def options(name):
        return {p.name: (p.opts, p.help, p.default) for p in commands[name].params}

    size, endurance = options("size"), options("endurance")
    assert [size[n] for n in shared] == [endurance[n] for n in shared]
    assert size["passes"][2] == 2.0 and size["block_size"][2] == "128k" and size["no_cache"][0] == ["--no-cache"]
    names = [p.name for p in commands["endurance"].params]
    assert names.index("tbw") + 1 == names.index("dwpd") and names[-1] == "json_out"
