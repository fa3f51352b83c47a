"""Sweeps (`ssdlab sweep`): grid expansion and its errors, rows, error rows, resume after a
killed sweep, and the same rows whatever runs them (1 or 2 local workers, a Dask cluster)."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

import ssdlab
from ssdlab.sweep import GridError, journal_path, load_grid, run_sweep

REPO = Path(__file__).resolve().parents[2]

JOB = """[global]
ioengine=libaio
direct=1
bs=4k
size={size}
number_ios={ios}
[mixed]
rw=randrw
"""


def write(d: Path, grid: str, ios: int = 300, name: str = "grid.toml", size: str = "64m") -> Path:
    (d / "job.fio").write_text(JOB.format(ios=ios, size=size))
    p = d / name
    p.write_text(grid)
    return p


BRIEF = """job = "job.fio"                       # relative to the grid file
profile = "samsung-850-pro"
scale = 0.01
[grid]
profile = ["samsung-850-pro", "samsung-970-pro-512"]
"job.iodepth" = [1, 4, 16]
seed = [1, 2]
"""


# ---- expansion -------------------------------------------------------------------------------


def test_cartesian_product_in_nested_loop_order(tmp_path):
    g = load_grid(write(tmp_path, BRIEF))
    assert len(g.runs) == 12
    assert g.keys == ["job", "profile", "scale", "job.iodepth", "seed"]
    combos = [(r.params["profile"], r.params["job.iodepth"], r.params["seed"]) for r in g.runs]
    assert combos[:3] == [("samsung-850-pro", 1, 1), ("samsung-850-pro", 1, 2), ("samsung-850-pro", 4, 1)]
    assert combos[-1] == ("samsung-970-pro-512", 16, 2)
    assert len(set(combos)) == 12
    assert [r.index for r in g.runs] == list(range(12))
    assert all(r.params["scale"] == 0.01 and r.params["job"] == "job.fio" for r in g.runs)
    # Keys are stable: the same grid read again, elsewhere, gives the same keys.
    keys = [r.key for r in g.runs]
    assert len(set(keys)) == 12
    other = tmp_path / "other"
    other.mkdir()
    assert [r.key for r in load_grid(write(other, BRIEF)).runs] == keys


def test_run_keys_follow_the_job_file(tmp_path):
    before = [r.key for r in load_grid(write(tmp_path, BRIEF)).runs]
    after = [r.key for r in load_grid(write(tmp_path, BRIEF, ios=301)).runs]
    assert not set(before) & set(after)


def test_zip_lists_advance_together(tmp_path):
    g = load_grid(write(tmp_path, """job = "job.fio"
[grid]
seed = [1, 2]
[zip]
"job.bs" = ["4k", "64k", "1m"]
"job.rw" = ["randread", "read", "write"]
"""))
    assert len(g.runs) == 6
    pairs = {(r.params["job.bs"], r.params["job.rw"]) for r in g.runs}
    assert pairs == {("4k", "randread"), ("64k", "read"), ("1m", "write")}
    assert g.runs[0].params["seed"] == 1 and g.runs[3].params["seed"] == 2


def test_several_zip_groups_and_nested_keys(tmp_path):
    g = load_grid(write(tmp_path, """job = "job.fio"
[[zip]]
"job.bs" = ["4k", "64k"]
"job.iodepth" = [32, 4]
[[zip]]
raid.level = [0, 5]
raid.drives = [2, 4]
"""))
    assert len(g.runs) == 4
    assert {(r.params["job.bs"], r.params["job.iodepth"], r.params["raid.level"], r.params["raid.drives"])
            for r in g.runs} == {("4k", 32, 0, 2), ("4k", 32, 5, 4), ("64k", 4, 0, 2), ("64k", 4, 5, 4)}
    # A nested table is the same key as the quoted dotted one.
    nested = load_grid(write(tmp_path, 'job = "job.fio"\n[grid.raid]\nlevel = [5]\ndrives = [4]\n', name="n.toml"))
    quoted = load_grid(write(tmp_path, 'job = "job.fio"\n[grid]\n"raid.level" = [5]\n"raid.drives" = [4]\n',
                             name="q.toml"))
    assert [r.params for r in nested.runs] == [r.params for r in quoted.runs]
    assert [r.key for r in nested.runs] == [r.key for r in quoted.runs]


@pytest.mark.parametrize("text, line, needle", [
    ('job = "job.fio"\n[grid]\nfoo = [1, 2]\n', 3, "unknown key 'foo'"),
    ('job = "job.fio"\n\n[grid]\nseed = [1]\n"job.iodepth" = [1, "abc"]\n', 5,
     "key 'job.iodepth', value \"abc\": option 'iodepth': expected a whole number"),
    ('job = "job.fio"\n[grid]\n"job.iodeph" = [1]\n', 3, "unknown option 'iodeph'"),
    ('job = "job.fio"\nprofile = "no-such-drive"\n', 2, "key 'profile', value \"no-such-drive\": unknown profile"),
    ('job = "job.fio"\n[zip]\n"job.bs" = ["4k", "8k"]\nseed = [1, 2, 3]\n', 4,
     "key 'seed': 3 values, but 'job.bs' has 2"),
    ('job = "job.fio"\n[grid]\nseed = [1]\n[zip]\nseed = [1, 2]\n', 5, "already swept in [grid] (line 3)"),
    ('job = "nope.fio"\n', 1, "key 'job', value \"nope.fio\": no such job file"),
    ('job = "job.fio"\n[grid.raid]\nlevel = [5, 7]\ndrives = [4]\n', 3, "key 'raid.level', value 7"),
    ('job = "job.fio"\n[grid]\n"raid.drives" = [4]\n', 3, "add raid.level"),
    ('job = "job.fio"\nseed = [1, 2]\n', 2, "put it under [grid] or [zip]"),
    ('job = "job.fio"\n[grid]\nseed = []\n', 3, "an empty list"),
    ('job = "job.fio"\n[grid]\nscale = [0.5, 2]\n', 3, "key 'scale', value 2"),
    ('job = "job.fio"\n[grid]\n"queue.nomerges" = [0, 5]\n', 3, "key 'queue.nomerges', value 5"),
    ('job = "job.fio"\n[grid]\nscheduler = ["noop"]\n"iosched.slice_idle" = [0]\n', 4, "no such tunable in noop"),
    ('job = "job.fio"\n[grid]\nscheduler = ["cfq", "fair"]\n', 3, "key 'scheduler', value \"fair\""),
    ('job = "job.fio"\n[grid]\n"host_set.mem" = ["8GiB", "lots"]\n', 3, "key 'host_set.mem', value \"lots\""),
    ('job = "job.fio"\n[grid]\n"host_set.iosched.slice_idle" = [0]\n', 3, "expected a host profile key"),
    ('job = "job.fio"\n[grid]\nseed = ["one"]\n', 3, "expected a whole number, got str"),
    ('job = "job.fio"\n[grid]\n"job.iodepth" = [1]\njob.iodepth = [2]\n', 4, "written twice (first on line 3)"),
    ('job = "job.fio"\n# the profile\n[grid]\n"profile_set.thermal.ambient_temperature" = [20, 40]\n', 4,
     "the profile has no [thermal] section to change"),
    ('job = "job.fio"\nsystem = "s.toml"\n[grid]\n"raid.level" = [5]\n"raid.drives" = [4]\n', 4,
     "with 'system', describe the array in the system file"),
])
def test_invalid_keys_and_values_name_file_line_and_key(tmp_path, text, line, needle):
    (tmp_path / "s.toml").write_text('[[drive]]\nname = "sda"\nprofile = "samsung-850-pro"\n')
    path = write(tmp_path, text)
    with pytest.raises(GridError) as e:
        load_grid(path)
    message = str(e.value)
    assert message.startswith(f"{path}:{line}: "), message
    assert needle in message, message


def test_a_value_is_checked_against_every_value_it_depends_on(tmp_path):
    # The 850 PRO has no thermal model, the 970 PRO has: the key is fine for the sweep, and
    # the 850 PRO's runs are error rows.
    g = load_grid(write(tmp_path, """job = "job.fio"
scale = 0.01
[grid]
profile = ["samsung-850-pro", "samsung-970-pro-512"]
"profile_set.thermal.ambient_temperature" = [40]
"""))
    assert len(g.runs) == 2
    with pytest.raises(ssdlab.ProfileError):
        g.spec(g.runs[0])
    g.spec(g.runs[1])


def test_a_jobs_offset_is_checked_against_the_sweeps_own_drives(tmp_path):
    (tmp_path / "off.fio").write_text("[j]\nrw=read\nsize=1m\noffset=10g\ndirect=1\n")
    grid = tmp_path / "g.toml"
    grid.write_text('job = "off.fio"\nprofile = "samsung-850-pro"\nscale = 0.01\n')
    with pytest.raises(GridError) as e:
        load_grid(grid)
    assert str(e.value).endswith("starts at byte 10737418240, past the end of the 3000709120-byte device "
                                 "(profile samsung-850-pro, scale 0.01)"), e.value
    assert "1099511627776" not in str(e.value)  # not the 1 TiB stand-in the check used
    # Wrong on one of the sweep's drives only: that run's error, not the grid's.
    grid.write_text('job = "off.fio"\nscale = 0.1\n[grid]\nprofile = ["samsung-850-pro", "samsung-970-pro-512"]\n')
    assert len(load_grid(grid).runs) == 2
    (tmp_path / "off.fio").write_text("[j]\nrw=read\nsize=1m\noffset=2t\ndirect=1\n")  # past 1 TiB, on a 61 TB drive
    grid.write_text('job = "off.fio"\nprofile = "solidigm-d5-p5336-61.44tb"\nscale = 0.05\n')
    assert len(load_grid(grid).runs) == 1


def test_keys_set_what_the_command_line_options_set(tmp_path):
    """Each key builds the run spec its ssdlab run option builds."""
    from ssdlab.config.profile import profile_text

    (tmp_path / "env.fio").write_text("[j]\ndirect=1\nrw=randwrite\nbs=${BS}\nsize=16m\nnumber_ios=100\n")
    (tmp_path / "drive.toml").write_text(profile_text("samsung-850-pro"))
    (tmp_path / "sys.toml").write_text('[[drive]]\nname = "sdb"\nprofile = "drive.toml"\n')
    g = load_grid(write(tmp_path, """job = "env.fio"
host = "generic-linux"
precondition = "sequential"
scale = 0.01
[zip]
"env.BS" = ["8k", "16k"]
"job.iodepth" = [2, 3]
scheduler = ["deadline", "mq-deadline"]
"iosched.fifo_batch" = [8, 16]
"queue.nomerges" = [2, 1]
"host_set.mem" = ["6GiB", "12GiB"]
"""))
    for run in g.runs:
        p = run.params
        got = g.spec(run).core
        want = ssdlab.build(tmp_path / "env.fio", host="generic-linux", precondition="sequential", scale=0.01,
                            env={"BS": p["env.BS"]}, overrides={"iodepth": str(p["job.iodepth"])},
                            scheduler=p["scheduler"],
                            host_set={"iosched.fifo_batch": str(p["iosched.fifo_batch"]),
                                      "queue.nomerges": str(p["queue.nomerges"]), "mem": p["host_set.mem"]}).core
        assert got == want
        assert got["host"]["memory"]["ram_bytes"] == int(p["host_set.mem"][:-3]) << 30
    assert g.spec(g.runs[1]).core["jobs"][0]["block_sizes"][1]["split"] == [[16384, 100.0]]

    g = load_grid(write(tmp_path, """job = "job.fio"
scale = 0.01
"profile_set.controller.cores" = 2
[grid.raid]
level = [5]
drives = [4]
chunk = ["64k"]
engine_set.stripe_cache_size = [512]
""", name="raid.toml"))
    want = ssdlab.build(tmp_path / "job.fio", system=ssdlab.raid(
        "samsung-850-pro", 5, 4, chunk="64k", scale=0.01, engine_set={"stripe_cache_size": "512"},
        profile_set={"controller.cores": "2"}), scale=0.01, profile_set={"controller.cores": "2"})
    assert g.spec(g.runs[0]).core == want.core

    # Paths are relative to the grid file; a profile TOML's contents are part of the key.
    g = load_grid(write(tmp_path, 'job = "job.fio"\nsystem = "sys.toml"\nscale = 0.01\n', name="s.toml"))
    assert g.spec(g.runs[0]).core["targets"][0]["name"] == "sdb"
    grid = write(tmp_path, 'job = "job.fio"\nprofile = "drive.toml"\nscale = 0.01\n', name="p.toml")
    key = load_grid(grid).runs[0].key
    assert load_grid(grid).spec(load_grid(grid).runs[0]).targets[0].profile == "samsung-850-pro"
    (tmp_path / "drive.toml").write_text(profile_text("samsung-850-pro") + "\n# edited\n")
    assert load_grid(grid).runs[0].key != key


def test_toml_errors_and_missing_files(tmp_path):
    with pytest.raises(GridError, match="no such grid file"):
        load_grid(tmp_path / "none.toml")
    with pytest.raises(GridError, match=r"not valid TOML: .*line 2"):
        load_grid(write(tmp_path, 'job = "job.fio"\n[grid\n'))
    with pytest.raises(GridError, match="missing key 'job'"):
        load_grid(write(tmp_path, 'seed = 1\n'))


# ---- running ---------------------------------------------------------------------------------

SMALL = """job = "job.fio"
scale = 0.01
[grid]
profile = ["samsung-850-pro", "samsung-970-pro-512"]
"job.iodepth" = [1, 8]
seed = [1, 2]
"""


def test_rows_are_the_same_with_one_or_two_workers_and_on_dask(tmp_path):
    distributed = pytest.importorskip("distributed")
    grid = write(tmp_path, SMALL)
    # Local workers start by spawn, or by forkserver where there is one (the default).
    one = run_sweep(grid, tmp_path / "one.parquet", workers=1, progress=False, start_method="spawn")
    two = run_sweep(grid, tmp_path / "two.parquet", workers=2, progress=False)
    with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                  dashboard_address=None) as cluster:
        on_dask = run_sweep(grid, tmp_path / "dask.parquet", scheduler=cluster.scheduler_address, progress=False)
    assert (one.ran, two.ran, on_dask.ran) == (8, 8, 8)
    a = pd.read_parquet(tmp_path / "one.parquet")
    pd.testing.assert_frame_equal(a, pd.read_parquet(tmp_path / "two.parquet"))
    pd.testing.assert_frame_equal(a, pd.read_parquet(tmp_path / "dask.parquet"))

    # One row per run and direction; the grid's keys and the results as columns.
    assert len(a) == 16 and one.rows == 16
    assert list(a.run) == [i // 2 for i in range(16)]
    assert list(a.direction) == ["read", "write"] * 8
    for column in ("profile", "job.iodepth", "seed", "iops", "bw_bytes", "clat_mean_ns", "clat_p99_ns", "util",
                   "waf", "iostat.aqu-sz", "internal.erase_count", "error", "jobname", "device"):
        assert column in a.columns, column
    assert a.error.isna().all()
    assert (a.iops > 0).all() and (a.util > 0).all() and (a.waf.dropna() > 0).all()

    # A row holds what a run of the same parameters reports.
    row = a[(a.profile == "samsung-970-pro-512") & (a["job.iodepth"] == 8) & (a.seed == 2)]
    r = ssdlab.run(tmp_path / "job.fio", profile="samsung-970-pro-512", scale=0.01, seed=2,
                   overrides={"iodepth": "8"})
    expect = r.to_pandas().set_index("direction")
    for _, got in row.iterrows():
        assert got.iops == pytest.approx(expect.loc[got.direction, "iops"], rel=1e-12)
        assert got.clat_mean_ns == pytest.approx(1e3 * expect.loc[got.direction, "clat_mean_us"], rel=1e-12)
    assert row.util.iloc[0] == pytest.approx(r.iostat()["%util"], rel=1e-12)


def test_failed_runs_are_error_rows(tmp_path, capsys):
    grid = write(tmp_path, """job = "job.fio"
scale = 0.01
"job.rw" = "randwrite"
[grid]
"raid.level" = [0, 6]
"raid.drives" = [2, 4]
""")
    s = run_sweep(grid, tmp_path / "out.parquet", workers=2, progress=True)
    assert (s.runs, s.failed, s.rows) == (4, 1, 4)
    df = pd.read_parquet(tmp_path / "out.parquet")
    bad = df[(df["raid.level"] == 6) & (df["raid.drives"] == 2)]
    assert len(bad) == 1 and "raid6 needs at least 4 drives" in bad.error.iloc[0]
    assert bad.iops.isna().all()
    good = df.drop(bad.index)
    assert good.error.isna().all() and (good.iops > 0).all() and set(good.device) == {"md0"}
    assert "1 failed" in capsys.readouterr().err  # the progress bar counts failures
    # A failed run is done: a rerun leaves it, unless asked to retry it.
    assert run_sweep(grid, tmp_path / "out.parquet", workers=1, progress=False).ran == 0
    again = run_sweep(grid, tmp_path / "out.parquet", workers=1, progress=False, retry_failed=True)
    assert (again.ran, again.reused, again.failed) == (1, 3, 1)


def test_a_run_that_fails_in_the_worker_is_an_error_row():
    from ssdlab.sweep.task import run_task

    answer = run_task("k", json.dumps({"core": {"seed": 1}}))
    assert answer["rows"] == [] and answer["error"] and answer["key"] == "k"
    spec = ssdlab.build("[j]\ndirect=1\nrw=randread\nsize=1m\nnumber_ios=10\n", scale=0.01)
    spec.core["jobs"][0]["iodepth"] = -1  # the core refuses it
    answer = run_task("k", spec.model_dump_json())
    assert answer["rows"] == [] and "iodepth" in answer["error"]


def test_a_worker_that_dies_fails_its_run_only(tmp_path):
    import sweep_tasks

    grid = write(tmp_path, 'job = "job.fio"\nscale = 0.01\n[grid]\nseed = [1, 2, 3, 4]\n')
    s = run_sweep(grid, tmp_path / "out.parquet", workers=2, progress=False, task=sweep_tasks.die_on_seed_2)
    df = pd.read_parquet(tmp_path / "out.parquet")
    assert s.failed == 1
    assert set(df[df.error.notna()].seed) == {2}
    assert "worker process" in df[df.seed == 2].error.iloc[0]
    assert df[df.seed != 2].error.isna().all() and len(df) == 1 + 3 * 2


def test_table_types():
    import math

    from ssdlab.sweep.runner import _table

    rows = [{"i": 1, "mixed": 1, "num": 1, "big": 2**64 - 1, "b": True, "s": "x", "none": None},
            {"i": None, "mixed": "4k", "num": 2.5, "big": 3, "b": None, "s": None},
            {"i": 3, "mixed": True, "num": None, "big": None, "b": False, "s": "é"}]
    columns = ["i", "mixed", "num", "big", "b", "s", "none"]
    t = _table(rows, columns)
    assert [str(f.type) for f in t.schema] == ["int64", "string", "double", "uint64", "bool", "string", "null"]
    assert t.column("mixed").to_pylist() == ["1", "4k", "true"]
    assert t.column("num").to_pylist() == [1.0, 2.5, None]
    assert t.column("big").to_pylist() == [2**64 - 1, 3, None]
    # Not a number has no JSON: the same table, built another way.
    rows[1]["num"] = float("nan")
    t = _table(rows, columns)
    assert str(t.schema.field("num").type) == "double" and math.isnan(t.column("num").to_pylist()[1])
    assert t.column("mixed").to_pylist() == ["1", "4k", "true"]


# ---- resume ----------------------------------------------------------------------------------


def _records(journal: Path) -> list[dict]:
    return [json.loads(line) for line in journal.read_text().splitlines()]


def _start_cli(grid: Path, out: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "ssdlab", "sweep", str(grid), "--workers", "1", "--out", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO,
                            start_new_session=True)


def _wait_for_records(journal: Path, n: int, proc: subprocess.Popen, timeout: float = 60) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if journal.exists() and len(journal.read_text().splitlines()) >= n:
            return
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    raise AssertionError(f"no {n} runs in {timeout} s")


def test_interrupted_and_killed_sweeps_resume_with_what_they_did(tmp_path):
    grid = write(tmp_path, 'job = "job.fio"\nscale = 0.01\n[grid]\nseed = [1, 2, 3, 4, 5, 6, 7, 8]\n',
                 ios=150_000, size="2g")  # about 0.1 s a run
    out = tmp_path / "out.parquet"
    journal = journal_path(out)

    # Ctrl-C: the sweep stops cleanly, says so, and keeps what finished.
    proc = _start_cli(grid, out)
    _wait_for_records(journal, 2, proc)
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "interrupted" in err and "run the same sweep again" in err
    first = _records(journal)
    assert 2 <= len(first) < 8 and not out.exists()

    # A crash (SIGKILL to the sweep and its workers) mid-way: finished runs are on disk.
    proc = _start_cli(grid, out)
    _wait_for_records(journal, len(first) + 1, proc)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=60)
    kept = journal.read_bytes()
    done = _records(journal)
    assert len(first) < len(done) < 8
    assert done[:len(first)] == first  # the second sweep ran none of the first's runs again
    # A crash can cut the last line short; it is dropped, not taken for a finished run.
    journal.write_bytes(kept + b'{"key": "cut sh')

    s = run_sweep(grid, out, workers=1, progress=False)
    assert (s.ran, s.reused, s.failed) == (8 - len(done), len(done), 0)
    after = _records(journal)
    assert after[:len(done)] == done and len(after) == 8
    assert len({r["key"] for r in after}) == 8
    assert journal.read_bytes().startswith(kept)

    # The rows are those of a sweep that never stopped.
    fresh = tmp_path / "fresh.parquet"
    run_sweep(grid, fresh, workers=2, progress=False)
    pd.testing.assert_frame_equal(pd.read_parquet(out), pd.read_parquet(fresh))

    # Run again: nothing to do, and the same file.
    again = run_sweep(grid, out, workers=1, progress=False)
    assert (again.ran, again.reused) == (0, 8)
    pd.testing.assert_frame_equal(pd.read_parquet(out), pd.read_parquet(fresh))


def test_the_workers_end_when_the_sweep_is_killed(tmp_path):
    import psutil

    (tmp_path / "long.fio").write_text("[j]\nrw=randread\nbs=4k\nsize=16m\nruntime=3000\ntime_based\ndirect=1\n")
    grid = tmp_path / "grid.toml"
    grid.write_text('job = "long.fio"\nscale = 0.01\n[grid]\nseed = [1, 2, 3, 4]\n')
    proc = subprocess.Popen([sys.executable, "-m", "ssdlab", "sweep", str(grid), "--workers", "2"], cwd=REPO,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    main = psutil.Process(proc.pid)
    end = time.monotonic() + 60
    while len(main.children(recursive=True)) < 4 and time.monotonic() < end:  # tracker, forkserver, 2 workers
        time.sleep(0.2)
    left = main.children(recursive=True)
    assert len(left) >= 4, left
    time.sleep(1)  # the runs under way
    proc.kill()  # SIGKILL: no handler of the sweep's runs
    proc.wait(timeout=30)
    gone, alive = psutil.wait_procs(left, timeout=30)
    for p in alive:  # leave nothing behind, whatever the test says
        p.kill()
    assert not alive, [p.cmdline()[:4] for p in alive]


@pytest.mark.parametrize("damage", [lambda r: {**r, "rows": "x"}, lambda r: {**r, "index": "first"},
                                    lambda r: [1, 2], lambda r: {**r, "extra": 1}, lambda r: {"key": r["key"]}])
def test_a_damaged_journal_record_is_run_again(tmp_path, damage, cli):
    grid = write(tmp_path, 'job = "job.fio"\nscale = 0.01\n[grid]\nseed = [1, 2]\n')
    out = tmp_path / "out.parquet"
    run_sweep(grid, out, workers=1, progress=False)
    journal = journal_path(out)
    first, second = _records(journal)
    journal.write_text(json.dumps(damage(first)) + "\n" + json.dumps(second) + "\n")
    r = cli("sweep", str(grid), "--out", str(out), "--dry-run")
    assert r.returncode == 0 and r.stdout.splitlines()[-1] == f"2 runs, 1 in {journal}", r.stdout + r.stderr
    s = run_sweep(grid, out, workers=1, progress=False)
    assert (s.ran, s.reused, s.failed) == (1, 1, 0)
    assert len(pd.read_parquet(out)) == 4  # a read and a write row a run


def test_extending_the_grid_runs_only_the_new_runs(tmp_path):
    grid = write(tmp_path, 'job = "job.fio"\nscale = 0.01\n[grid]\nseed = [1, 2]\n')
    out = tmp_path / "out.parquet"
    assert run_sweep(grid, out, workers=1, progress=False).ran == 2
    grid.write_text('job = "job.fio"\nscale = 0.01\n[grid]\nseed = [1, 2, 3]\n')
    s = run_sweep(grid, out, workers=1, progress=False)
    assert (s.ran, s.reused, s.runs) == (1, 2, 3)
    assert sorted(set(pd.read_parquet(out).seed)) == [1, 2, 3]


# ---- the command -----------------------------------------------------------------------------


def test_cli_sweep(cli, tmp_path):
    grid = write(tmp_path, 'job = "job.fio"\nscale = 0.01\n[grid]\n"job.iodepth" = [1, 4]\n')
    out = tmp_path / "results.parquet"
    r = cli("sweep", str(grid), "--workers", "2", "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert "2 runs: 2 ran, 0 failed" in r.stdout
    df = pd.read_parquet(out)
    assert list(df["job.iodepth"].unique()) == [1, 4] and "iops" in df

    r = cli("sweep", str(grid), "--dry-run", "--out", str(out))
    assert r.returncode == 0 and "2 runs, 2 in" in r.stdout and "done" in r.stdout
    failing = write(tmp_path, 'job = "job.fio"\n"raid.level" = 6\n"raid.drives" = 2\n', name="failing.toml")
    r = cli("sweep", str(failing))
    assert r.returncode == 0 and "1 runs: 1 ran, 1 failed" in r.stdout  # a failed run is a row, not an error
    assert cli("sweep", str(failing)).stdout.count("0 ran") == 1
    assert "1 ran, 1 failed" in cli("sweep", str(failing), "--retry-failed").stdout

    bad = write(tmp_path, 'job = "job.fio"\n[grid]\n"job.iodepth" = [1, "x"]\n', name="bad.toml")
    r = cli("sweep", str(bad))
    assert r.returncode == 2
    assert r.stderr.startswith(f"ssdlab: error: {bad}:3: key 'job.iodepth'")
    r = cli("sweep", str(grid), "--workers", "1", "--scheduler", "tcp://127.0.0.1:1")
    assert r.returncode == 2 and "--workers" in r.stderr
    r = cli("sweep", str(grid), "--out", str(tmp_path / "no" / "such.parquet"))
    assert r.returncode == 2 and "no such directory" in r.stderr


@pytest.mark.parametrize("address, said", [("banana", "--scheduler banana: no HOST:PORT"),
                                           ("tcp://127.0.0.1:1", "cannot reach the Dask scheduler"),
                                           ("tcp://host:port", "--scheduler tcp://host:port: no HOST:PORT")])
def test_a_scheduler_that_is_not_there_is_one_line_at_once(cli, tmp_path, address, said):
    grid = write(tmp_path, 'job = "job.fio"\nscale = 0.01\n')
    start = time.monotonic()
    r = cli("sweep", str(grid), "--scheduler", address)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and said in r.stderr, r.stderr
    assert "Traceback" not in r.stderr and time.monotonic() - start < 20  # the client waited 20 s, then 40 s
    assert not list(tmp_path.glob("*.jsonl"))


def test_a_grid_says_its_size_first_and_refuses_one_too_large(cli, tmp_path):
    seeds, depths = ", ".join(map(str, range(1000))), ", ".join(map(str, range(1, 1001)))
    big = write(tmp_path, f'job = "job.fio"\nscale = 0.01\n[grid]\nseed = [{seeds}]\n"job.iodepth" = [{depths}]\n',
                name="big.toml")
    start = time.monotonic()
    r = cli("sweep", str(big), "--dry-run")
    assert r.returncode == 2 and r.stderr == (f"ssdlab: error: {big}: 1,000,000 runs (1000 seed x 1000 job.iodepth), "
                                              "more than a sweep takes (100,000): split the grid into sweeps of fewer "
                                              "runs\n")
    assert time.monotonic() - start < 30  # was past 120 s and 857 MB
    mid = write(tmp_path, f'job = "job.fio"\nscale = 0.01\n[grid]\nseed = [{seeds}]\n"job.iodepth" = [1, 2]\n',
                name="mid.toml")
    r = cli("sweep", str(mid), "--dry-run")
    lines = r.stdout.splitlines()
    assert r.returncode == 0 and lines[0] == "2,000 runs (1000 seed x 2 job.iodepth)"
    assert lines[1].split() == ["run", "seed", "job.iodepth", "status"] and len(lines) == 2 + 2000 + 1
    assert lines[-2].split() == ["1999", "999", "2", "to", "run"]


def test_a_sweep_that_cannot_start_leaves_no_journal(tmp_path):
    from ssdlab.sweep.runner import SweepError

    grid = write(tmp_path, 'job = "job.fio"\nscale = 0.01\n')
    out = tmp_path / "out.parquet"
    with pytest.raises(SweepError, match="expected at least 1"):
        run_sweep(grid, out, workers=0)
    assert not journal_path(out).exists() and not out.exists()


def test_a_pool_that_breaks_between_waits_loses_no_run(tmp_path, monkeypatch):
    """A worker can die while the sweep is handing out runs: the executor's submit then raises
    BrokenProcessPool itself. The run being handed out is not to blame; only the one that was
    running fails, and every other run still gets its rows."""
    import concurrent.futures as cf
    from concurrent.futures.process import BrokenProcessPool

    from ssdlab.sweep import runner

    class BreakingPool(runner._Pool):
        """Runs tasks in this process; seed 2's run "kills its worker", and the pool then
        refuses the next submit as a broken ProcessPoolExecutor does."""

        def __init__(self):
            super().__init__(None, 4)
            self.broken = False
            self.restarts = 0

        def submit(self, fn, key, spec_json):
            if self.broken:
                raise BrokenProcessPool("a child process terminated abruptly")
            f = cf.Future()
            if json.loads(spec_json)["core"]["seed"] == 2:
                self.broken = True
                f.set_exception(BrokenProcessPool("a child process terminated abruptly"))
            else:
                f.set_result(fn(key, spec_json))
            return f

        def restart(self):
            self.broken, self.restarts = False, self.restarts + 1
            return True

        def close(self):
            pass

    pool = BreakingPool()
    monkeypatch.setattr(runner, "_pool", lambda *a, **k: pool)
    grid = write(tmp_path, 'job = "job.fio"\nscale = 0.01\n[grid]\nseed = [1, 2, 3, 4]\n')
    s = run_sweep(grid, tmp_path / "out.parquet", progress=False)
    df = pd.read_parquet(tmp_path / "out.parquet")
    assert pool.restarts == 1 and s.failed == 1
    assert set(df[df.error.notna()].seed) == {2}
    assert df[df.seed != 2].error.isna().all() and len(df) == 1 + 3 * 2
