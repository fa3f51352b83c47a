"""Bad file-level input found by mutating the shipped examples: each case is one
line naming the file, the line where there is one, the key and what was expected — never a
traceback, a panic, an error about the core's keys, or a value run as if it were fine."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ssdlab import api
from ssdlab.analysis.memory import MemoryLimitError
from ssdlab.filework import FileWorkError, load
from ssdlab.units import UnitError, parse_size, parse_time_ns

SCENARIO = """\
name = "tiny"
filesystem = { type = "ext4", size = "64m" }
runtime = "200ms"

[[fileset]]
name = "a"
dir = "/a"
entries = 20
size = "8k"
prealloc = 0.5

[[thread]]
name = "w"
instances = 2
loops = 5
ops = [ { op = "create", set = "a", pick = "next" }, { op = "write_whole", io = "4k" }, { op = "close" } ]
"""


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "work.toml"
    p.write_text(text)
    return p


@pytest.mark.parametrize(("old", "new", "line", "expected"), [
    # No threads or no sets: the run had nothing to report (a KeyError) or named set 0.
    (None, "", None, "fileset: missing: a scenario needs at least a file set"),
    (SCENARIO[SCENARIO.index("[[thread]]"):], "", None, "thread: missing: a scenario needs at least a thread"),
    # Not a list of tables: TypeErrors.
    (SCENARIO[SCENARIO.index("[[fileset]]"):SCENARIO.index("[[thread]]")], 'fileset = ["a"]\n', 5,
     "fileset: expected tables: [[fileset]]"),
    ('op = "create"', "op = []", 16, "ops.0.op: "),
    # Said as None ("fileset.0.entries: None: expected ...") or as the whole op's table.
    ("entries = 20\n", "", 5, "fileset.0.entries: missing: expected a whole number of files"),
    ('size = "8k"\n', "", 5, "fileset.0.size: missing: expected a size like 4k"),
    ('{ op = "close" }', '{ op = "closed" }', 16, "thread.0.ops.2.op: 'closed': expected an operation, one of"),
    ('{ op = "close" }', "{ }", 16, "thread.0.ops.2.op: missing: expected an operation"),
    ('set = "a", pick = "next"', 'set = {}, pick = "next"', 16, "ops.0.set: {} names no file set"),
    ('pick = "next"', "pick = []", 16, "ops.0.pick: []: expected one of"),
    ('ops = [', 'after = [["w"]]\nops = [', 16, "thread.0.after: "),
    # Accepted as numbers (True is an int) or as no value at all.
    ("entries = 20", "entries = true", 8, "fileset.0.entries: true: expected a whole number"),
    ("prealloc = 0.5", "prealloc = true", 10, "fileset.0.prealloc: true: expected a share"),
    ('name = "tiny"', "name = 4", 1, "name: 4: expected a text"),
    ('runtime = "200ms"', "runtime = []", 3, "runtime: []: expected a time"),
    ('runtime = "200ms"', 'runtime = ""', 3, "runtime: '': expected a time"),
    # Too large for the core: a u64 it could not read, an allocation that aborted, a MemoryError.
    ('runtime = "200ms"', "runtime = 1000000000000000000", 3, "runtime: 1000000000000000000: expected a time of at most"),
    ("entries = 20", "entries = 1000000000000000000", 8, "expected a whole number of files, 1 to 4,294,967,295"),
    ("instances = 2", "instances = 1000000000000000000", 14, "thread.0.instances: 1000000000000000000: expected"),
    # Not a finite number: OverflowError.
    ('runtime = "200ms"', "runtime = inf", 3, "runtime: inf: expected a time"),
    ('size = "8k"', "size = inf", 9, "fileset.0.size: inf: expected a size"),
    # Refused by the core, without the file: a partition of nothing, a call of no bytes.
    ('size = "64m"', "size = 0", 2, "filesystem.size: 0: expected the partition's size, above 0"),
    ('io = "4k"', "io = 0", 16, "thread.0.ops.1.io: 0: expected the bytes of a call, above 0"),
    # A size table's unknown key was ignored; what the core's SizeSpec refuses was said in its
    # terms ("Uniform { min: 2097152, ... }: not a size distribution").
    ('size = "8k"', 'size = { min = "1k", max = "2k", colour = "red" }', 9, "fileset.0.size.colour: unknown key"),
    ('size = "8k"', 'size = { mean = "4k", min = "1k" }', 9, "fileset.0.size.min: unknown key"),
    ('size = "8k"', 'size = { min = "2m", max = "1m" }', 9, "fileset.0.size.min: '2m': expected at most max, '1m'"),
    ('size = "8k"', 'size = { min = "1m", max = "2m", align = 0 }', 9, "fileset.0.size.align: 0: expected an alignment"),
    ('size = "8k"', 'size = { mean = "0" }', 9, "fileset.0.size.mean: '0': expected a mean above 0"),
    ('size = "8k"', 'size = { mean = "4k", max = "1k" }', 9, "fileset.0.size.max: '1k': expected at least the mean"),
])
def test_a_bad_scenario_is_one_line_naming_file_line_and_key(tmp_path: Path, old, new, line, expected) -> None:
    if old is None:
        text = new
    else:
        assert old in SCENARIO
        text = SCENARIO.replace(old, new, 1)
    p = write(tmp_path, text)
    with pytest.raises(FileWorkError) as e:
        load(p)
    msg = str(e.value)
    assert "\n" not in msg
    assert msg.startswith(f"{p}:{line}:" if line else f"{p}:"), msg
    assert expected in msg, msg


def test_a_zipf_picks_ranks_are_within_its_set(tmp_path: Path) -> None:
    """Past the set, the core refused the job ("invalid job 'adsl': ... ranks"), without the file."""
    text = open(Path(__file__).resolve().parents[2] / "python/ssdlab/scenarios/seed000-webserver.toml").read()
    old = "zipf = 0.8, scattered = true }"
    assert old in text
    p = write(tmp_path, text.replace(old, "zipf = 0.8, ranks = [0, 601] }", 1))
    with pytest.raises(FileWorkError, match=r":\d+: thread\.0\.ops\.0\.pick\.ranks: \[0, 601\]: expected ranks within "
                                            r"the set's 600 files"):
        load(p)


def test_a_servers_costs_are_finite(tmp_path: Path) -> None:
    """``copy_ns_per_byte = inf`` reached the core as JSON it could not read ("expected value")."""
    text = open(Path(__file__).resolve().parents[2] / "python/ssdlab/scenarios/seed000-webserver.toml").read()
    old = "sendfile = true\n"
    assert old in text
    p = write(tmp_path, text.replace(old, old + "costs = { copy_ns_per_byte = inf }\n", 1))
    with pytest.raises(FileWorkError, match=r":\d+: network\.costs\.copy_ns_per_byte: inf: expected nanoseconds per byte"):
        load(p)


@pytest.mark.parametrize(("old", "new", "expected"), [
    # The core refuses them while making the file system or laying the set out: said at the
    # scenario's table, not as the core's "invalid system: targets.0.filesystem" or "file_sets.a".
    ('size = "64m"', 'size = "1000t"', ":2: key 'filesystem': a file system of "),
    ('size = "8k"', 'size = "1g"', ":5: key 'fileset a': entries: laying the set out: no space left on device"),
])
def test_what_the_core_refuses_in_a_scenario_is_said_at_its_table(tmp_path: Path, old, new, expected) -> None:
    p = write(tmp_path, SCENARIO.replace(old, new, 1))
    with pytest.raises(api.SimulationError) as e:
        api.execute(api.build(None, profile="intel-x25-m-80", host="generic-linux", files=load(p), scale=0.01))
    assert str(e.value).startswith(f"{p}{expected}"), str(e.value)


@pytest.mark.parametrize(("old", "new", "expected"), [
    # The set is named with the file and line it was written at.
    ("entries = 20", "entries = 4000000000", "work.toml:5, 4,000,000,000 entries)"),
    ("instances = 2", "instances = 4000000", "4,000,000 threads need about"),
])
def test_a_scenario_too_big_for_memory_is_refused_before_the_core_allocates(tmp_path: Path, old, new, expected) -> None:
    """A set's entries and the threads' jobs are counted in the memory estimate (the core
    aborted allocating 16 GB; 4 million threads raised MemoryError)."""
    p = write(tmp_path, SCENARIO.replace(old, new, 1))
    with pytest.raises(MemoryLimitError, match=re.escape(expected)):
        api.build(None, profile="intel-x25-m-80", host="generic-linux", files=load(p), scale=0.01,
                  memory_limit="8GiB")


@pytest.mark.parametrize("value", [float("inf"), float("nan")])
def test_sizes_and_times_are_finite(value) -> None:
    with pytest.raises(UnitError):
        parse_size(value)
    with pytest.raises(UnitError):
        parse_time_ns(value, "s")
    with pytest.raises(UnitError):
        parse_time_ns(str(value), "s")


FIO = """\
[global]
ioengine=psync
size=1m
runtime=100ms
time_based

[buf]
rw=randread
nrfiles=4
filesize=256k
openfiles=2

[meta]
ioengine=filecreate
nrfiles=16
filesize=4k
"""


@pytest.mark.parametrize(("old", "new", "line", "expected"), [
    # Taken as "not a number": the warning it would give was left out, and the value ignored.
    ("openfiles=2", "openfiles=x", 11, "option 'openfiles': expected a whole number, got 'x'"),
    ("openfiles=2", "openfiles=-1", 11, "option 'openfiles': must not be negative"),
    ("openfiles=2", "openfiles=1.5", 11, "option 'openfiles': fractional value '1.5'"),
    ("openfiles=2", "openfiles=", 11, "option 'openfiles': expected a value"),
    ("filesize=4k\n", "filesize=4k\nstat_type=bogus\n", 17, "option 'stat_type':"),
    # Past the core's 32-bit entry numbers (and fio's unsigned nr_files): taken, when memory allowed.
    ("nrfiles=4", "nrfiles=5000000000", 9, "option 'nrfiles': must be at most 4,294,967,295"),
    # Two jobs of one name on files: the second's layout failed in the core ("file_sets.buf.0:
    # the name exists"), or a metadata engine stopped with EEXIST in another job's files.
    ("[meta]", "[buf]", 13, "job 'buf': the job of that name at line 7 works on files too"),
    ("[meta]", "[meta]\n[meta]", 14, "job 'meta': the job of that name at line 13 works on files too"),
])
def test_a_bad_fio_job_on_files_is_one_line_naming_file_line_and_option(tmp_path: Path, old, new, line,
                                                                        expected) -> None:
    from ssdlab.fio import FioJobError

    assert old in FIO
    p = tmp_path / "files.fio"
    p.write_text(FIO.replace(old, new, 1))
    with pytest.raises(FioJobError) as e:
        api.build(p, profile="intel-x25-m-80", host="generic-linux", scale=0.01)
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith(f"{p}:{line}: "), msg
    assert expected in msg, msg


def test_openfiles_is_read_as_fio_reads_an_int_option(tmp_path: Path) -> None:
    """``1k`` is 1024 files open (fio's int options take the size parser's suffixes): fewer
    than 2048 files, and warned (it was taken as no number and ignored); not fewer than 4."""
    p = tmp_path / "files.fio"
    warned = []
    for nrfiles in (4, 2048):
        p.write_text(FIO.replace("openfiles=2", "openfiles=1k").replace("nrfiles=4", f"nrfiles={nrfiles}"))
        warned.append(any("openfiles=1k with" in w for w in api.build(p, profile="intel-x25-m-80", host="generic-linux",
                                                                       scale=0.01).warnings))
    assert warned == [False, True]


WORKLOAD = """\
set $nfiles=20
set $nthreads=2
define fileset name=set1,path=/tmp,size=8k,entries=$nfiles,dirwidth=100,prealloc=80
define process name=p,instances=1
{
  thread name=t,instances=$nthreads
  {
    flowop openfile name=open1,filesetname=set1,fd=1
    flowop closefile name=close1,fd=1
  }
}
run 1
"""


@pytest.mark.parametrize("text", ["", WORKLOAD[:WORKLOAD.index("define process")]])
def test_a_filebench_workload_without_a_thread_is_refused_in_one_line(tmp_path: Path, text) -> None:
    """Nothing to run: the report failed on the core's missing ``files`` (a KeyError)."""
    p = tmp_path / "w.f"
    p.write_text(text)
    with pytest.raises(FileWorkError, match=f"^{re.escape(str(p))}: no thread to run"):
        load(p)


def test_a_filebench_set_past_the_cores_entry_numbers_is_refused_at_its_line(tmp_path: Path) -> None:
    """Entries are numbered in 32 bits in the core; with the memory to hold them, more were
    cut short there without a word."""
    from ssdlab.filebench import FilebenchError

    p = tmp_path / "w.f"
    p.write_text(WORKLOAD.replace("$nfiles=20", "$nfiles=5000000000"))
    with pytest.raises(FilebenchError, match=re.escape(f"{p}:3: fileset set1: entries: 5000000000 is above 4,294,967,295")):
        load(p)


@pytest.mark.parametrize(("old", "new", "expected"), [
    ("$nfiles=20", "$nfiles=4000000000", "/w.f:3, 4,000,000,000 entries)"),
    ("$nthreads=2", "$nthreads=5000000", "5,000,000 threads need about"),
])
def test_a_filebench_workload_too_big_for_memory_is_refused(tmp_path: Path, old, new, expected) -> None:
    """The core aborted allocating them (exit status 134)."""
    p = tmp_path / "w.f"
    p.write_text(WORKLOAD.replace(old, new))
    with pytest.raises(MemoryLimitError, match=re.escape(expected)):
        api.build(None, profile="intel-x25-m-80", host="generic-linux", files=load(p), scale=0.01,
                  memory_limit="8GiB")


@pytest.mark.parametrize(("args", "expected"), [
    # Ran as if fine: 100,000 bonded ports, and a run of no time that served nothing.
    (["--nic", "100000x1g"], "--nic 100000x1g: expected at most 64 ports"),
    (["--runtime", "0"], "--runtime 0: expected a time above 0"),
    # Each run failed on a u64 the core could not read, reported as a row's error, exit status 0.
    (["--runtime", "1000000000d"], "--runtime 1000000000d: expected a time above 0 and at most 213,503 days"),
])
def test_ssdlab_server_refuses_bad_options_in_one_line(cli, args, expected) -> None:
    r = cli("server", "seed000-webserver.toml", "--profile", "intel-x25-m-80", "--drives", "2", "--nic", "1x1g",
            "--workers", "1", *args)
    assert r.returncode == 2, r.stdout + r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"ssdlab: error: {expected}"), r.stderr


@pytest.mark.parametrize(("rw", "each"), [("read", 25 + 24), ("randread", 25 + 24 + 48)])
def test_a_fio_jobs_files_count_in_the_memory_estimate(tmp_path: Path, rw, each) -> None:
    """Per file: the set's entry, the job's offsets, and a random job's map (host/files.rs
    allocates them for every file at the first I/O: an abort past the memory there was)."""
    from ssdlab.analysis import memory

    p = tmp_path / "many.fio"
    p.write_text(f"[j]\nrw={rw}\nsize=1m\nbs=4k\nnrfiles=1000\nruntime=1ms\ntime_based\n")
    spec = api.build(p, profile="intel-x25-m-80", host="generic-linux", scale=0.01)
    terms = [t for t in memory.estimate(spec.core).terms if t.kind == "file set"]
    assert [t.sim_bytes for t in terms] == [1000 * each]
