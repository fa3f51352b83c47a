"""File workloads from scenario files: the loader's checks (one line naming the file, the line
and the key) and a small queue run through the core (every file made is deleted, dirtied pages
are accounted for, the same seed gives the same result)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ssdlab import api
from ssdlab.config.tomlpos import toml_text
from ssdlab.experiments.kernel_loop import fsync_work
from ssdlab.filework import FileWorkError, load

SCENARIOS = Path(__file__).resolve().parents[2] / "python" / "ssdlab" / "scenarios"

QUEUE = """\
name = "queue"
filesystem = { type = "ext4", size = "2g" }

[[fileset]]
name = "q"
entries = 2000
size = "0"

[[thread]]
name = "writer"
instances = 2
loops = 300
ops = [ { op = "create", set = "q", pick = "rotor" },
        { op = "append", size = "10k", io = "4k" },
        { op = "close" } ]

[[thread]]
name = "runner"
instances = 2
serves = ["writer"]
idle = "10ms"
ops = [ { op = "list_dir", set = "q" },
        { op = "delete", set = "q", pick = "rotor", repeat = 10 } ]
"""


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "work.toml"
    p.write_text(text)
    return p


def test_the_mail_queue_scenario_loads() -> None:
    w = load(SCENARIOS / "seed000-mailqueue.toml")
    assert [t.name for t in w.threads] == ["writer-10k", "writer-100k", "runner"]
    assert sum(t.instances for t in w.threads) == 20
    assert w.file_sets[0]["entries"] == 1_000_000
    assert w.filesystem is not None and w.filesystem["type"] == "ext3"
    jobs = w.jobs()
    runners = [j for j in jobs if j.name == "runner"]
    # Every runner serves all ten writers, which are jobs 0 to 9.
    assert all(j.files["program"]["producers"] == list(range(10)) for j in runners)
    loops = sum(t.instances * t.files["program"]["loops"] for t in w.threads if t.name.startswith("writer"))
    assert loops == 1_000_000


@pytest.mark.parametrize(("change", "line", "expected"), [
    (('instances = 2\nloops', 'instances = 0\nloops'), 11, "thread.0.instances: 0: expected a whole number"),
    (('{ op = "close" }', '{ op = "shut" }'), None, "expected an operation, one of"),
    (('set = "q", pick = "rotor" },\n        { op = "append"', 'set = "z", pick = "rotor" },\n        { op = "append"'),
     None, "'z' names no file set"),
    (('serves = ["writer"]', 'serves = ["nobody"]'), None, "'nobody' names no other thread"),
    (('repeat = 10', 'repeat = 0'), None, "expected a whole number from 1 to 10000"),
    # A size or a time said "expected" twice and quoted the value twice ("'soon': expected a time
    # like 10s: expected a time like 45us, 3.5ms or 8h, got 'soon'").
    (('idle = "10ms"', 'idle = "soon"'), 21, "thread.1.idle: 'soon': expected a time like 10s"),
    (('idle = "10ms"', 'idle = "10 fortnights"'), 21, "thread.1.idle: '10 fortnights': unknown time unit 'fortnights' "
     "(use ns, us, ms, s, m, h, d)"),
    (('idle = "10ms"', 'idle = -1'), 21, "thread.1.idle: -1: time must not be negative"),
    (('size = "10k", io = "4k"', 'size = "10q", io = "4k"'), None, "ops.1.size: '10q': expected a size like 4k"),
    (('type = "ext4"', 'type = "ext4", commit = "often"'), 2, "filesystem.commit: 'often': expected a time like 45us, "
     "3.5ms or 8h"),
    (('entries = 2000', 'entries = 2000\ncolour = "red"'), 7, "fileset.0.colour: unknown key"),
    (('type = "ext4"', 'type = "xfs"'), 2, 'expected type = "ext3" or "ext4"'),
    (('size = "2g"', 'size = "2 furlongs"'), 2, "filesystem.size: '2 furlongs': expected a size like 4096, 16KiB or 256GB"),
    (('name = "runner"', 'name = "writer"'), 18, "'writer' is defined twice"),
    (('{ op = "close" }', '{ op = "close", set = "q" }'), None, "ops.2.set: not a key of 'close'"),
    (('size = "10k", io = "4k"', 'sise = "10k", io = "4k"'), None, "ops.1.sise: not a key of 'append'"),
    (('size = "0"', 'size = { mean = "4k", shape = "wide" }'), None, "size.shape: 'wide': expected a positive"),
    (('entries = 2000', 'entries = 2000\ndir_width = -1'), None, "dir_width: -1: expected a whole number"),
    (('entries = 2000', 'entries = 2000\nnames_cached = 1'), 7, "fileset.0.names_cached: 1: expected true or false"),
    (('entries = 2000', 'entries = 2000\nmaps_cached = "yes"'), 7, "fileset.0.maps_cached: 'yes': expected true or false"),
    (('size = "10k", io = "4k"', 'size = "10k", io = "4k" }, { op = "read", io = "4k", offsets = { zipf = 0 }'), None,
     "offsets: { zipf = 0 }: expected { zipf = S } (S above 0)"),
    # TOML's values as TOML writes them: Python's True, [True] and {'zipf': 0} were shown
    (('instances = 2\nloops', 'instances = true\nloops'), 11, "thread.0.instances: true: expected a whole number"),
    (('idle = "10ms"', 'idle = false'), 21, "thread.1.idle: false: expected a time like 10s"),
    (('serves = ["writer"]', 'serves = [true]'), 20, "thread.1.serves: [true]: expected a list of thread names"),
    (('size = "0"', 'size = { mean = "4k", shape = true }'), None, "size.shape: true: expected a positive number"),
    (('loops = 300', 'loops = 300\nstop_on_error = "yes"'), None, "stop_on_error: 'yes': expected true or false"),
])
def test_a_bad_scenario_is_one_line_naming_file_line_and_key(tmp_path: Path, change, line, expected) -> None:
    old, new = change
    assert old in QUEUE
    p = write(tmp_path, QUEUE.replace(old, new, 1))
    with pytest.raises(FileWorkError) as e:
        load(p)
    msg = str(e.value)
    assert "\n" not in msg
    assert msg.startswith(str(p)), msg
    if line is not None:
        assert msg.startswith(f"{p}:{line}:"), msg
    assert expected in msg, msg
    quoted = re.search(r": ('[^']*'):", expected)
    if quoted:  # the value, quoted once, and what was expected said once
        assert msg.count(quoted.group(1)) == 1 and msg.count("expected") <= 1, msg


def test_values_are_quoted_as_toml_writes_them() -> None:
    import datetime

    assert [toml_text(v) for v in (True, False, 3, 0.5, float("inf"), "x", datetime.date(2008, 1, 2))] == [
        "true", "false", "3", "0.5", "inf", "'x'", "2008-01-02"]
    assert toml_text([1, [True], {}]) == "[1, [true], {}]"
    assert toml_text({"zipf": 0, "two words": False}) == "{ zipf = 0, 'two words' = false }"


def test_not_toml_is_named(tmp_path: Path) -> None:
    p = write(tmp_path, "name = \n")
    with pytest.raises(FileWorkError, match=f"^{p}: not valid TOML"):
        load(p)


def run(path: Path, profile: str, seed: int = 1) -> dict:
    spec = api.build(None, profile=profile, host="generic-linux", files=load(path), seed=seed)
    return api.execute(spec).core


@pytest.mark.parametrize("profile", ["seagate-barracuda-7200.11-1tb", "samsung-850-pro"])
def test_a_queue_run_deletes_every_file_it_makes_and_accounts_for_every_dirty_page(tmp_path: Path, profile) -> None:
    core = run(write(tmp_path, QUEUE), profile)
    jobs = core["jobs"]
    writers = [j for j in jobs if j["name"] == "writer"]
    runners = [j for j in jobs if j["name"] == "runner"]
    made = sum(j["file_ops"][0]["ops"] - j["file_ops"][0]["errors"] for j in writers)
    assert made == 600
    # A runner's program is list_dir then ten deletes (repeat = 10): a delete that finds
    # nothing is an error.
    assert all(len(j["file_ops"]) == 11 for j in runners)
    deleted = sum(o["ops"] - o["errors"] for j in runners for o in j["file_ops"][1:])
    assert deleted == made
    f = core["files"]
    assert f["dirtied_pages"] == 600 * 3  # 10 KB in 4 KiB calls: three pages each
    assert f["dirtied_pages"] == f["written_back_pages"] + f["dropped_dirty_pages"] + f["dirty_pages_at_end"]
    cpu = f["cpu"]
    assert cpu["busy"] > 0
    assert cpu["busy"] + cpu["iowait"] + cpu["idle"] == pytest.approx(1.0)


def test_a_thread_waiting_for_its_fsyncs_commit_is_in_the_load_but_not_in_iowait(tmp_path: Path) -> None:
    # One writer fsyncing each 4 KiB file on a disk: nearly all its time is spent waiting for
    # the journal commit its fsync forces (jbd2_log_wait_commit: wait_event, D state), while
    # the journal thread waits for the commit's writes (wait_on_buffer: io_schedule). Both
    # count in the load; only the journal thread's core is in iowait, as sar -P ALL shows it.
    f = run(write(tmp_path, fsync_work(100)), "seagate-barracuda-7200.11-1tb")["files"]
    assert f["commits"] == 100
    cores = sorted(c["iowait"] for c in f["cpu_cores"])
    assert len(cores) == 8
    assert cores[-1] > 0.9, cores
    assert cores[-2] < 0.05, cores
    assert f["cpu"]["iowait"] * 8 == pytest.approx(cores[-1] + sum(cores[:-1]), rel=1e-9)
    assert f["cpu"]["active"] > 1.9
    for c in f["cpu_cores"]:
        assert c["busy"] + c["iowait"] + c["idle"] == pytest.approx(1.0)


OVERWRITE_2008 = """\
name = "overwrites"
filesystem = { type = "ext3", era = "2008", size = "1g" }

[[fileset]]
name = "f"
entries = 1
size = "1m"
prealloc = 1.0

[[thread]]
name = "writer"
loops = 500
ops = [ { op = "open", set = "f", pick = "random" }, { op = "write", io = "4k", random = true },
        { op = "fsync", data_only = true }, { op = "close" } ]
"""


def test_a_2008_fdatasync_that_forces_no_commit_waits_for_its_pages_in_iowait(tmp_path: Path) -> None:
    # fdatasync of an overwrite on a 2008 kernel: nothing to commit (no size or block
    # change), so the thread waits for its page in filemap_fdatawait, io_schedule: its
    # core's idle time is iowait. Only an fsync that forces a commit waits in D state from
    # the start (until 1 Dec 2026 every 2008 fsync did: the writer's core then had 11 ms of
    # iowait, its first lookup's, against 52 ms of fdatasyncs; now 59).
    spec = api.build(None, profile="seagate-barracuda-7200.11-1tb", host="server-2008", files=load(write(tmp_path, OVERWRITE_2008)))
    core = api.execute(spec).core
    f = core["files"]
    assert f["commits"] == 0, f["commits"]
    fdatasync_ns = core["jobs"][0]["file_ops"][2]["latency_ns"]  # all 500 of them
    iowait_ns = max(c["iowait"] for c in f["cpu_cores"]) * (core["end_ns"] - core["start_ns"])
    assert iowait_ns > 0.9 * fdatasync_ns, (iowait_ns, fdatasync_ns)


def test_the_same_seed_gives_the_same_run(tmp_path: Path) -> None:
    p = write(tmp_path, QUEUE)
    a = run(p, "samsung-850-pro", seed=3)
    b = run(p, "samsung-850-pro", seed=3)
    assert json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def test_a_host_without_memory_is_refused_for_file_work(tmp_path: Path) -> None:
    host = tmp_path / "bare.toml"
    host.write_text('name = "bare"\n[cpu]\nio_overhead = "3us"\n')
    with pytest.raises((ValueError, Exception), match="memory"):
        api.build(None, profile="samsung-850-pro", host=str(host), files=load(write(tmp_path, QUEUE)))


def test_ssdlab_run_takes_a_scenario_and_reports_each_thread_and_the_cpus(tmp_path: Path, cli) -> None:
    p = write(tmp_path, QUEUE)
    r = cli("run", str(p), "--profile", "samsung-850-pro", "--host", "generic-linux")
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "queue: 4 threads on sda (samsung-850-pro)" in out
    assert "writer x2" in out and "runner x2" in out
    # the runner's ten deletes (repeat = 10) are one line
    assert re.findall(r"\bdelete( x\d+)?\s+[\d,]+", out) == [" x10"]
    assert "pages dirtied 1,800" in out
    assert "CPUs (as sar -u and uptime)" in out
    # generic-linux's eight cores, four to a line: "core: busy / iowait / idle"
    cores = re.findall(r"(\d): ([\d.]+) / ([\d.]+) / ([\d.]+)", out.split("per core (busy / iowait / idle %, as sar -P ALL)")[1])
    assert [int(c[0]) for c in cores[:8]] == list(range(8))
    assert all(abs(sum(float(x) for x in c[1:]) - 100) < 0.2 for c in cores[:8])
    assert "free extents (e2freefrag's bins)" in out
    j = cli("run", str(p), "--profile", "samsung-850-pro", "--host", "generic-linux", "--output-format", "json")
    assert j.returncode == 0, j.stderr
    doc = json.loads(j.stdout)
    writer = doc["threads"][0]
    assert [o["op"] for o in writer["ops"]] == ["create", "append", "close"]
    assert writer["ops"][0]["ops"] == 600 and writer["ops"][0]["errors"] == 0
    runner = doc["threads"][1]
    assert runner["ops"][1]["repeat"] == 10
    assert runner["ops"][1]["ops"] - runner["ops"][1]["errors"] == 600


@pytest.mark.parametrize(("args", "expected"), [
    (("--fs", "xfs"), "--fs xfs: expected ext3 or ext4"),
    (("--set", "bs=8k"), "--set: a fio job option;"),
    (("--verify-data",), "--verify-data: not for a file workload"),
    (("--output-format", "terse"), "--output-format terse: a file workload reports as normal or json"),
    (("--runtime", "0"), "--runtime 0: expected a time above 0"),
    (("--runtime", "soon"), "--runtime soon: expected a time like"),
])
def test_ssdlab_run_refuses_what_a_file_workload_cannot_use_in_one_line(tmp_path: Path, cli, args, expected) -> None:
    r = cli("run", str(write(tmp_path, QUEUE)), "--profile", "samsung-850-pro", *args)
    assert r.returncode == 2, r.stdout
    assert expected in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_ssdlab_run_makes_the_file_system_on_a_raid_array(tmp_path: Path, cli) -> None:
    r = cli("run", str(write(tmp_path, QUEUE)), "--profile", "samsung-850-pro", "--raid", "0", "--drives", "3",
            "--host", "generic-linux")
    assert r.returncode == 0, r.stderr
    assert "queue: 4 threads on md0 (samsung-850-pro)" in r.stdout


def test_a_file_workload_is_named_by_its_suffix_or_a_personality(tmp_path: Path, monkeypatch) -> None:
    from ssdlab.cli.runs import _file_workload

    monkeypatch.chdir(tmp_path)
    assert _file_workload("queue.toml") == Path("queue.toml")
    assert _file_workload("varmail") == "varmail"
    assert _file_workload("varmail.f") == "varmail"  # no such file here: the personality
    (tmp_path / "varmail.f").write_text("")
    assert _file_workload("varmail.f") == Path("varmail.f")  # a file of that name wins
    assert _file_workload("job.fio") is None and _file_workload("randread") is None


def test_a_scenario_can_time_mkfs(tmp_path: Path) -> None:
    p = tmp_path / "mkfs.toml"
    p.write_text('filesystem = { type = "ext4", inodes = 100000 }\n'
                 '[[fileset]]\nname = "root"\ndir = "/"\nentries = 1\nsize = "4k"\n'
                 '[[thread]]\nname = "mke2fs"\nops = [ { op = "mkfs", set = "root" } ]\nloops = 1\n')
    w = load(p)
    assert w.threads[0].files["program"]["ops"] == [{"op": "mkfs", "set": 0}]
    bad = tmp_path / "bad.toml"
    bad.write_text(p.read_text().replace('set = "root"', 'set = "root", io = "4k"'))
    with pytest.raises(FileWorkError, match=r"bad.toml:9: thread.0.ops.0.io: not a key of .mkfs."):
        load(bad)


FOREVER = """\
name = "forever"
filesystem = { type = "ext4", size = "1g" }

[[fileset]]
name = "a"
entries = 10
size = "4k"
prealloc = 1.0

[[thread]]
name = "reader"
ops = [ { op = "open", set = "a", pick = "random" }, { op = "read_whole", io = "4k" }, { op = "close" } ]
"""


def test_a_thread_that_can_never_end_is_refused_in_one_line_naming_it(tmp_path: Path) -> None:
    # Its picks never run out and nothing else ends it: the run would never end.
    p = write(tmp_path, FOREVER)
    with pytest.raises(FileWorkError, match=r"^\S*work\.toml:10: thread 'reader' never ends: .*runtime"):
        api.build(None, profile="samsung-850-pro", host="generic-linux", files=load(p))
    # A run time, loops or a power cut end it.
    for text in (FOREVER.replace('size = "1g" }', 'size = "1g" }\nruntime = "20ms"'),
                 FOREVER.replace('name = "reader"', 'name = "reader"\nloops = 3')):
        core = run(write(tmp_path, text), "samsung-850-pro")
        assert core["jobs"][0]["file_ops"][1]["ops"] > 0
    spec = api.build(None, profile="samsung-850-pro", host="generic-linux", files=load(write(tmp_path, FOREVER)),
                     power_cut="20ms")
    assert api.execute(spec).core["power_cut"]["at_ns"] == 20_000_000


def test_a_filebench_file_whose_threads_never_end_and_that_has_no_run_is_refused(tmp_path: Path) -> None:
    p = tmp_path / "noruns.f"
    p.write_text("define fileset name=a,path=/tmp,entries=10,size=4k,prealloc=100,dirwidth=10\n"
                 "define process name=p,instances=1\n{\n  thread name=t,memsize=10m,instances=1\n  {\n"
                 "    flowop openfile name=o,filesetname=a,fd=1\n    flowop readwholefile name=r,fd=1,iosize=4k\n"
                 "    flowop closefile name=c,fd=1\n  }\n}\n")
    with pytest.raises(FileWorkError, match=r"noruns\.f:4: thread 'p\.t' never ends: .*'run 60'"):
        api.build(None, profile="samsung-850-pro", host="generic-linux", files=load(p))


def test_ssdlab_run_runtime_ends_a_thread_that_would_not_end_by_itself(tmp_path: Path, cli) -> None:
    r = cli("run", str(write(tmp_path, FOREVER)), "--profile", "samsung-850-pro", "--host", "generic-linux",
            "--runtime", "30ms", "--output-format", "json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["run_s"] == pytest.approx(0.03, abs=1e-3)
    # And a fio job is told where its run time goes.
    r = cli("run", "--profile", "samsung-850-pro", "--runtime", "5")
    assert r.returncode == 2 and "fio job takes --set runtime=5" in r.stderr, r.stderr


@pytest.mark.parametrize("key", ["names_cached", "maps_cached"])
def test_a_cache_of_files_never_laid_out_is_said_to_be_ignored(tmp_path: Path, key) -> None:
    # The core marks the names (the mapping blocks) of the files it lays out before the run:
    # with prealloc 0 there are none, and the setting does nothing.
    w = load(write(tmp_path, QUEUE.replace('entries = 2000', f'entries = 2000\n{key} = true', 1)))
    assert w.warnings == [f"{tmp_path / 'work.toml'}:7: fileset.0.{key}: no file of the set is laid out before the "
                          "run (prealloc 0 of 2,000 entries): nothing to be cached; ignored"], w.warnings
    laid = load(write(tmp_path, QUEUE.replace('entries = 2000', f'entries = 2000\n{key} = true\nprealloc = 0.5', 1)))
    assert laid.warnings == []
