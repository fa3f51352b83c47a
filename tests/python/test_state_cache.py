"""Drives preconditioned with random overwrites are kept in the state cache: the next run of
the same drive, preconditioning and seed reads the state back instead, with the same result;
``--no-cache`` neither reads nor keeps."""

from __future__ import annotations

import json

import ssdlab
from ssdlab import api
from ssdlab.cachedir import state_cache_dir
from ssdlab.progress import precondition_estimate

JOB = "[j]\nrw=randrw\nbs=4k\niodepth=8\nnumber_ios=4000\nsize=64m\n"


def _run(state_cache, seed=0):
    seen = []
    spec = ssdlab.build(JOB, profile="samsung-850-pro", precondition="random:1", scale=0.005, seed=seed)
    result = api.execute(spec, progress=seen.append, state_cache=state_cache)
    restored = any(p.restored for p in seen if p.phase == "precondition")
    return result.core, restored


def test_the_second_run_reads_the_drive_back_with_the_same_result(tmp_path):
    plain, _ = _run(None)
    first, restored = _run(tmp_path)
    assert not restored
    assert len(list(tmp_path.glob("*.ftl"))) == 1
    second, restored = _run(tmp_path)
    assert restored
    assert first == plain and second == plain
    _, restored = _run(tmp_path, seed=1)
    assert not restored, "another seed is another state"


def test_a_damaged_entry_is_preconditioned_again(tmp_path):
    plain, _ = _run(tmp_path)
    (entry,) = tmp_path.glob("*.ftl")
    entry.write_bytes(entry.read_bytes()[:-7])
    again, restored = _run(tmp_path)
    assert not restored and again == plain
    _, restored = _run(tmp_path)
    assert restored, "the damaged entry was replaced by a whole one"


def _jobs(text: str) -> list:
    return [{k: v for k, v in j.items() if k not in ("job_runtime", "usr_cpu", "sys_cpu", "ctx")}
            for j in json.loads(text)["jobs"]]


def test_the_command_line_keeps_states_in_the_cache_directory(tmp_path, cli):
    job = tmp_path / "j.fio"
    job.write_text(JOB)
    home = tmp_path / "cache"
    env = {"XDG_CACHE_HOME": str(home)}
    args = ("run", str(job), "--profile", "samsung-850-pro", "--precondition", "random:1", "--scale", "0.005",
            "--output-format", "json")
    off = cli(*args, "--no-cache", env=env)
    assert off.returncode == 0, off.stderr
    assert not (home / "ssdlab" / "states").exists(), "--no-cache keeps nothing"
    first = cli(*args, env=env)
    second = cli(*args, env=env)
    assert first.returncode == 0 and second.returncode == 0, first.stderr + second.stderr
    assert len(list((home / "ssdlab" / "states").glob("*.ftl"))) == 1
    assert _jobs(first.stdout) == _jobs(off.stdout) == _jobs(second.stdout)


def test_the_cache_directory_follows_xdg(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert state_cache_dir() == tmp_path / "ssdlab" / "states"


def test_the_estimate_says_the_cache_may_spare_the_cost():
    random = ssdlab.build(JOB, profile="samsung-850-pro", precondition="random:1", scale=0.005)
    assert "state cache" not in precondition_estimate(random)
    assert precondition_estimate(random, cached=True).endswith(
        "(none if the state cache holds it from an earlier run; else it is kept there)")
    sequential = ssdlab.build(JOB, profile="samsung-850-pro", precondition="sequential", scale=0.005)
    assert "state cache" not in precondition_estimate(sequential, cached=True)
