"""Our numbers against the real fio's: ``fio --parse-only --debug=parse`` prints, for each
option it parses, the value it stored (bytes, counts, or microseconds for times). Skipped
when fio is not installed (Debian: ``apt-get install fio``)."""

from __future__ import annotations

import os
import random
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from fio_booleans import BOOLEAN_VALUES, not_modelled_booleans
from shared_data import REASON, shared_data

from ssdlab.fio.grammar import parse_sources
from ssdlab.fio.options import (
    SIZE_OPTIONS,
    TIME_SECONDS_OPTIONS,
    TIME_US_OPTIONS,
    canonical,
    fio_333_lacks,
    fio_numbers,
    fio_time_read,
    section_order,
)
from ssdlab.units import ValueProblem

FIO = shutil.which("fio")
pytestmark = pytest.mark.skipif(FIO is None, reason="fio is not installed")
NUMERIC = SIZE_OPTIONS | TIME_SECONDS_OPTIONS | TIME_US_OPTIONS
ENV = {"FIO_BS": "4k", "FIO_RW": "randread", "FIO_IODEPTH": "8", "NUMJOBS": "4"}
_OUT = re.compile(r"\s+ret=(\d+), out=(\d+)")


def fio_parsed(path: Path) -> list[tuple[str, list[int]]]:
    """(option, stored values) in the order fio handled them, from the job file on."""
    proc = subprocess.run(
        [FIO, "--parse-only", "--debug=parse", str(path)],
        capture_output=True, text=True, timeout=60, env={**os.environ, **ENV},
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if "Parsing ini file" in line)
    result: list[tuple[str, list[int]]] = []
    current: list[int] | None = None
    for line in lines[start:]:
        if "handle_option=" in line and "__handle_option" not in line:
            name = line.split("handle_option=", 1)[1].split(",", 1)[0]
            current = []
            result.append((name, current))
        elif (m := _OUT.search(line)) and current is not None and m.group(1) == "0":
            current.append(int(m.group(2)))
    return [(name, values) for name, values in result if name in NUMERIC]


def ours(path: Path) -> list[tuple[str, list[int]]]:
    """The same list computed by ssdlab, section by section in fio's option order."""
    result = []
    for section in parse_sources([(path.read_text(), str(path), path.parent)], env=ENV):
        kb_base = 1024
        for opt in section_order(section.options):
            name = canonical(opt.key)
            if name == "kb_base":
                kb_base = int(opt.value)
            if name in NUMERIC and opt.value is not None:
                result.append((name, fio_numbers(name, opt.value, kb_base)))
    return result


SIZE_CASES = [
    "bs=4k", "bs=4KiB", "bs=4kb", "bs=4K", "bs=8k,32k", "bs=,8k", "bs=1k,2k,3k", "bs=4k,,16k",
    "bs=0x2000", "bs=512b", "ba=4k", "size=1g", "size=1P", "size=1pib", "size=10G",
    "offset=1m", "offset_increment=10g", "io_size=100m", "io_limit=3g", "filesize=64m",
    "rate=1m,2m", "rate=500k", "rate_iops=100,,50", "iodepth=16", "numjobs=4",
    "number_ios=1k", "thinktime_blocks=4", "fsync=32", "fdatasync=8", "rwmixread=70",
    "rwmixwrite=30", "loops=3", "randseed=1234", "size=(2*512m)",
]
TIME_CASES = [
    "runtime=10", "runtime=10s", "runtime=2m", "runtime=1h", "runtime=1d", "runtime=250ms",
    "runtime=250msec", "runtime=30us", "runtime=30usec", "runtime=10sec", "runtime=10min",
    "timeout=7", "ramp_time=5", "ramp_time=5ms", "startdelay=3", "startdelay=1-5",
    "startdelay=2:4", "startdelay=1s-5s", "startdelay=100ms-2s", "thinktime=2000",
    "thinktime=2ms", "thinktime=1s",
]


def _job(tmp_path: Path, name: str, lines: list[str]) -> Path:
    path = tmp_path / f"{name}.fio"
    path.write_text("[job]\n" + "\n".join(lines) + "\n")
    return path


def _compare(path: Path) -> None:
    expected, got = fio_parsed(path), ours(path)
    assert got == expected


@pytest.mark.parametrize("kb_base", [None, "1000"])
def test_sizes_and_counts_match_fio(tmp_path, kb_base):
    # '(...)' needs fio's arithmetic parser, which Debian's build lacks
    cases = [c for c in SIZE_CASES if "(" not in c]
    lines = ([f"kb_base={kb_base}"] if kb_base else []) + cases
    _compare(_job(tmp_path, "sizes", lines))


def test_times_match_fio(tmp_path):
    _compare(_job(tmp_path, "times", TIME_CASES))


def test_random_size_strings_match_fio(tmp_path):
    rng = random.Random(20240601)
    suffixes = ["", "b", "k", "K", "kb", "KB", "kib", "KiB", "m", "M", "mb", "MiB", "g", "G",
                "gib", "GiB", "t", "T", "tib"]
    for kb_base in ("1024", "1000"):
        lines = [f"kb_base={kb_base}"]
        for _ in range(60):
            lines.append(f"bs={rng.randint(0, 5000)}{rng.choice(suffixes)}")
        _compare(_job(tmp_path, f"random{kb_base}", lines))


def test_keyword_math_matches_fio(tmp_path):
    path = _job(tmp_path, "kw", ["bs=$pagesize", "size=$pagesize*16", "iodepth=$pagesize/512"])
    fio = dict(fio_parsed(path))
    host = {"pagesize": os.sysconf("SC_PAGE_SIZE")}
    sections = parse_sources([(path.read_text(), str(path), tmp_path)], env={}, host=host)
    from ssdlab.units import evaluate

    for opt in sections[0].options:
        value = str(int(evaluate(opt.value, integer=True))) if opt.keyword_math else opt.value
        assert fio_numbers(opt.key, value) == fio[canonical(opt.key)]


EXAMPLES = ["fio-rand-RW.fio", "fio-seq-read.fio", "iometer-file-access-server.fio",
            "tiobench-example.fio", "ssd-test.fio", "cross-stripe-verify.fio", "exitwhat.fio",
            "1mbs_clients.fio", "fsx.fio", "waitfor.fio", "aio-read.fio"]


@pytest.mark.skipif(shared_data() is None, reason=REASON)
@pytest.mark.parametrize("name", EXAMPLES)
def test_example_numbers_match_fio(name):
    _compare(shared_data() / "fio-examples" / name)


def test_seed_job_numbers_match_fio():
    data = shared_data()
    if data is None:
        pytest.skip(REASON)
    _compare(data / "seed-jobs" / "seed004-host-workload.fio")


def test_filesize_io_bytes_match_fio(tmp_path):
    """How much each clone moves with ``filesize``: fio's null engine, which creates no files."""
    import json

    from test_fio_parser import FILESIZE_CASES, jobs

    for options, expected in FILESIZE_CASES:
        args = [f"--{o}" for o in options.split()]
        proc = subprocess.run([FIO, "--name=x", "--ioengine=null", "--rw=write", "--bs=4k",
                               "--output-format=json", *args],
                              capture_output=True, text=True, timeout=60, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        fio_bytes = [j["write"]["io_bytes"] for j in json.loads(proc.stdout)["jobs"]]
        ours = [j.io_limit for j in jobs("[x]\nrw=write\nbs=4k\n" + "\n".join(options.split()) + "\n").jobs]
        assert (options, ours) == (options, fio_bytes) == (options, expected)


def _fio_refuses(path: Path, sections: list[list[str]]) -> str:
    """fio --parse-only on job sections of option lines: its output if it refuses them."""
    path.write_text("".join(f"[j{i}]\nfilename=/dev/null\nsize=4k\n" + "".join(f"{line}\n" for line in lines)
                            for i, lines in enumerate(sections)))
    proc = subprocess.run([FIO, "--parse-only", str(path)], capture_output=True, text=True, timeout=60)
    return proc.stdout + proc.stderr if proc.returncode else ""


def test_not_modelled_booleans_table_matches_fio(tmp_path):
    """The table ssdlab's not-modelled boolean options are checked against (fio_booleans.py)
    is what fio takes: every accepted value of every option in one run (fio stops at the
    first job it drops), each refused value in its own run, naming every option."""
    names = not_modelled_booleans()

    def lines(value: str | None) -> list[str]:
        return [name if value is None else f"{name}={value}" for name in names]

    taken = [value for value, ok in BOOLEAN_VALUES.items() if ok]
    assert _fio_refuses(tmp_path / "taken.fio", [lines(value) for value in taken]) == ""
    for value in (value for value, ok in BOOLEAN_VALUES.items() if not ok):
        out = _fio_refuses(tmp_path / "refused.fio", [lines(value)])
        missing = [line for line in lines(value) if f"failed parsing {line}\n" not in out]
        assert out and not missing, (value, missing, out[-500:])


def test_latency_target_reads_as_fio_stores_it(tmp_path):
    """fio stores the first part of the value that reads (``ret=0``) and refuses the value
    when none does; ssdlab reports that, or refuses it."""
    path = tmp_path / "lt.fio"
    for value in ("10ms", "1k", "1.5ms", "0.5", "2m5", "1,2", "abc,5", "0x10", "10sec", "1e3", "1MS", "5-3",
                  "abc", "(2*3)", "(2-1)", ",", "x:"):
        path.write_text(f"[j]\nfilename=/dev/null\nsize=4k\nlatency_target={value}\n")
        proc = subprocess.run([FIO, "--parse-only", "--debug=parse", str(path)], capture_output=True, text=True,
                              timeout=60)
        lines = proc.stdout.splitlines()
        start = next(i for i, line in enumerate(lines) if "handle_option=latency_target" in line)
        stored = next((int(m.group(2)) for line in lines[start:] if (m := _OUT.search(line)) and m.group(1) == "0"),
                      None)
        assert (stored is None) == (proc.returncode != 0), value
        try:
            ours = fio_time_read(value)[0]
        except ValueProblem:
            ours = None
        assert ours == stored, value


def test_the_names_said_not_in_fio_333_are_bad_options_to_it(tmp_path):
    """fio 3.33 names every option it does not know ("Bad option <thinkcycles=1>") and goes on."""
    names = sorted(fio_333_lacks())
    assert "ramp_size" in names and "thinkcycles" in names and "softrandommap" not in names
    path = tmp_path / "newer.fio"
    path.write_text("[j]\nfilename=/dev/null\nsize=4k\n" + "".join(f"{name}=1\n" for name in names))
    proc = subprocess.run([FIO, "--parse-only", str(path)], capture_output=True, text=True, timeout=60)
    out = proc.stdout + proc.stderr
    assert [name for name in names if f"Bad option <{name}=1>" not in out] == []
