"""The command line's edges: output that cannot be written, options that do not go together,
values fio itself refuses, non-finite numbers, argument errors, signals and temporary files.
Each is one line on stderr, exit status 2 (130/143 for a signal), no traceback, nothing left
behind."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SHORT = ["--set", "runtime=0.01"]


def _ssdlab(*args: str, **kw) -> subprocess.CompletedProcess:
    kw.setdefault("stdout", subprocess.PIPE)
    return subprocess.run([sys.executable, "-m", "ssdlab", *args], stderr=subprocess.PIPE, text=True, cwd=REPO,
                          timeout=300, **kw)


def one_line(p: subprocess.CompletedProcess, *parts: str, status: int = 2) -> None:
    assert p.returncode == status, (p.returncode, p.stderr)
    assert p.stderr.count("\n") == 1 and p.stderr.startswith("ssdlab: error: "), p.stderr
    assert "Traceback" not in p.stderr
    for part in parts:
        assert part in p.stderr, (part, p.stderr)


# ---- standard output ------------------------------------------------------------------------


@pytest.mark.parametrize("args", [("run", "--output-format", "json", *SHORT), ("profiles", "show", "samsung-850-pro"),
                                  ("profiles",), ("--version",)])
def test_standard_output_that_fails_fails_the_command(tmp_path, args):
    with open("/dev/full", "w") as full:
        one_line(_ssdlab(*args, stdout=full), "ssdlab: error: standard output: No space left on device")
    out = tmp_path / "out.txt"
    with open(out, "w") as f:  # ulimit -f 1: the kernel takes 1 KiB and refuses the rest
        p = _ssdlab(*args, stdout=f, preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (1024, 1024)))
    if out.stat().st_size < 1024:
        assert p.returncode == 0  # all of it fitted
    else:
        one_line(p, "ssdlab: error: standard output: File too large")


def test_a_reader_that_stops_early_ends_the_command_quietly():
    p = subprocess.Popen([sys.executable, "-m", "ssdlab", "profiles", "show", "samsung-850-pro"], cwd=REPO,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    p.stdout.read(10)
    p.stdout.close()
    assert p.wait(timeout=120) in (0, 141) and b"Traceback" not in p.stderr.read()


# ---- options that do not go together, files that are not what they should be ----------------


def _system(tmp_path) -> Path:
    path = tmp_path / "sys.toml"
    path.write_text('[[drive]]\nname = "sda"\nprofile = "samsung-850-pro"\n')
    return path


def test_profile_and_system_together_are_refused(tmp_path):
    sysf = _system(tmp_path)
    one_line(_ssdlab("run", "--system", str(sysf), "--profile", "intel-optane-905p-480", *SHORT),
             f"--profile intel-optane-905p-480 and --system {sysf}: give one")
    trace = tmp_path / "t.disksim"
    trace.write_text("0 0 0 8 1\n")
    one_line(_ssdlab("replay", str(trace), "--format", "disksim", "--system", str(sysf), "--profile",
                     "samsung-850-pro"), "give one")
    assert _ssdlab("run", "--system", str(sysf), *SHORT).returncode == 0


def test_profiles_show_shows_only_profiles(tmp_path):
    other = tmp_path / "notes.txt"
    other.write_text("just some text\n")
    one_line(_ssdlab("profiles", "show", str(other)), f"{other}: not a drive, host or engine profile")
    one_line(_ssdlab("profiles", "show", str(_system(tmp_path))), "not a drive, host or engine profile",
             "unknown key 'drive'")
    shown = _ssdlab("profiles", "show", str(REPO / "python/ssdlab/profiles/hosts/generic-linux.toml"))
    assert shown.returncode == 0 and shown.stdout.startswith('name = "generic-linux"')


def test_a_file_that_is_not_text_is_named(tmp_path):
    junk = tmp_path / "junk.toml"
    junk.write_bytes(b"name = \"\xb7\"\n")
    for args in (("profiles", "show", str(junk)), ("run", "--profile", str(junk)), ("run", "--system", str(junk)),
                 ("sweep", str(junk)), ("rebuild", "--system", str(junk))):
        one_line(_ssdlab(*args), f"{junk}: not text (byte 0xb7 at offset 8 is not UTF-8)")


# ---- job files: what fio refuses is refused ----------------------------------------------------


def _job(tmp_path, body: str) -> str:
    path = tmp_path / "j.fio"
    path.write_text("[j]\nrw=randread\nsize=1m\nruntime=0.01\n" + body)
    return str(path)


@pytest.mark.parametrize("body, said", [
    ("direct=1\nbs=1\n", "option 'bs': read block size 1: with direct=1"),
    ("direct=1\nbs=511\n", "option 'bs': read block size 511: with direct=1"),
    ("direct=1\nba=3\n", "option 'ba': read block alignment 3: with direct=1"),
    ("direct=1\nbssplit=4k/50:100/50\n", "option 'bssplit': read block size 100"),
    ("direct=1\noffset=100\n", "option 'offset': job 'j' (clone 0) starts at byte 100"),
])
def test_sub_sector_direct_io_is_refused(tmp_path, body, said):
    one_line(_ssdlab("run", _job(tmp_path, body)), said, "whole 512-byte sectors")


def test_sub_sector_buffered_io_still_runs(tmp_path):
    assert _ssdlab("run", _job(tmp_path, "bs=511\n")).returncode == 0


@pytest.mark.parametrize("option, said", [
    ("verify=sha9999", "option 'verify': expected one of 0, md5"),
    ("ioengine=warpdrive", "option 'ioengine': no such fio ioengine 'warpdrive'"),
    ("ioengine=libaoi", "(did you mean 'libaio'?)"),
    ("cpus_allowed=zz", "option 'cpus_allowed': expected a list of CPUs such as 0-3,8, got 'zz'"),
    ("gtod_reduce=5", "option 'gtod_reduce': expected 0 or 1, got '5'"),
    ("write_hint=loud", "option 'write_hint': expected one of none, short"),
])
def test_values_fio_refuses_are_refused_before_the_not_modelled_warning(tmp_path, option, said):
    one_line(_ssdlab("run", _job(tmp_path, option + "\n")), said)


@pytest.mark.parametrize("option", ["verify=md5", "ioengine=external:/opt/e.so", "cpus_allowed=0-1,3",
                                    "mem=mmap:/tmp/m", "write_hint=short"])
def test_values_fio_takes_are_taken(tmp_path, option):
    p = _ssdlab("run", _job(tmp_path, option + "\n"))
    assert p.returncode == 0 and "not modelled" in p.stderr, p.stderr


def test_gtod_reduce_is_taken_and_honoured(tmp_path):
    # The report drops the latencies gtod_reduce turns off, as fio 3.33 does: no warning.
    p = _ssdlab("run", _job(tmp_path, "gtod_reduce=1\n"))
    assert p.returncode == 0 and "option 'gtod_reduce" not in p.stderr, p.stderr


# ---- numbers: finite, in range, and said in the user's terms -----------------------------------


@pytest.mark.parametrize("args, said", [
    (("run", "--profile", "samsung-970-pro-512", "--profile-set", "thermal.ambient_temperature=inf", *SHORT),
     "--profile-set thermal.ambient_temperature=inf: key 'thermal.ambient_temperature': expected a finite number, got inf"),
    (("run", "--profile-set", "controller.busy_cv=nan", *SHORT), "key 'controller.busy_cv': expected a finite number"),
    (("run", "--profile-set", "capacity=1e30", *SHORT),
     "key 'capacity': 1e+30 is more than the core holds (at most 18446744073709551615, 2^64 - 1)"),
    (("run", "--precondition", "random:inf", *SHORT), "precondition random:inf: expected a finite number of passes"),
    (("run", "--precondition", "random:", *SHORT), "precondition 'random:': expected a number of passes after ':'"),
    (("run", "--precondition", "sequential:", *SHORT), "precondition 'sequential:': expected none, sequential or"),
    # The size was said without the option ("expected a size like 4096, 16KiB or 256GB, got 'abc'").
    (("rebuild", "--raid", "5", "--drives", "4", "--sample", "abc"), "ssdlab: error: --sample abc: expected a size"),
    (("run", "--interval", "inf"), "interval 'inf': expected a time"),
    (("endurance", "--write-rate", "1GB/s", "--capacity", "1TB", "--dwpd", "nan", "--warranty-years", "5"),
     "--dwpd nan: expected a positive, finite number"),
    (("endurance", "--write-rate", "1GB/s", "--capacity", "1TB", "--dwpd", "1", "--warranty-years", "inf"),
     "--warranty-years inf: expected a positive, finite number"),
    (("endurance", "--write-rate", "1GB/s", "--profile", "samsung-850-pro", "--passes", "inf"),
     "passes inf: expected a positive, finite number of drive writes"),
    (("size", "--target", "1GB/s", "--duration", "0", "--drive-rate", "500MB/s", "--capacity", "1TB"),
     "--duration 0: expected a positive time"),
])
def test_non_finite_and_out_of_range_numbers_are_refused_naming_the_key(args, said):
    one_line(_ssdlab(*args), said)


@pytest.mark.parametrize("args, said", [
    # --capacity and --tbw were said without the option ("ssdlab: error: expected a size like
    # 4096, 16KiB or 256GB, got '-1'"); the others quoted the value twice ("--sample abc:
    # expected a size like 4096, 16KiB or 256GB, got 'abc', or all").
    (("endurance", "--write-rate", "100MB/s", "--capacity", "-1", "--tbw", "600TB"),
     "ssdlab: error: --capacity -1: expected a size like 4096, 16KiB or 256GB\n"),
    (("endurance", "--write-rate", "100MB/s", "--capacity", "1TB", "--tbw", "abc"),
     "ssdlab: error: --tbw abc: expected a size like 4096, 16KiB or 256GB\n"),
    (("endurance", "--write-rate", "-5MB/s", "--capacity", "1TB"),
     "ssdlab: error: --write-rate -5MB/s: expected a rate like 550MB/s, 12.5GB/s or 100Gb/s\n"),
    (("size", "--target", "1GB/s", "--duration", "soon", "--drive-rate", "500MB/s", "--capacity", "1TB"),
     "ssdlab: error: --duration soon: expected a time like 45us, 3.5ms or 8h\n"),
    (("rebuild", "--raid", "5", "--drives", "4", "--sample", "abc"),
     "ssdlab: error: --sample abc: expected a size like 4096, 16KiB or 256GB, or all\n"),
    (("run", "--interval", "abc"), "ssdlab: error: interval 'abc': expected a time like 45us, 3.5ms or 8h\n"),
])
def test_a_bad_size_rate_or_time_names_its_option_and_the_value_once(args, said):
    p = _ssdlab(*args)
    one_line(p)
    assert p.stderr == said, p.stderr


@pytest.mark.parametrize("args, said", [
    # Said without the option it came from ("scheduler 'bogus': expected one of ...").
    (("run", "--scheduler", "bogus", *SHORT), "ssdlab: error: --scheduler: scheduler 'bogus': expected one of none,"),
    (("replay", "/dev/null", "--format", "disksim", "--scheduler", "bogus"), "ssdlab: error: --scheduler: scheduler 'bogus'"),
    (("server", "seed000-webserver.toml", "--profile", "intel-x25-m-80", "--iosched", "bogus"),
     "ssdlab: error: --iosched: scheduler 'bogus': expected one of none,"),
])
def test_an_unknown_scheduler_is_named_with_its_option(args, said):
    one_line(_ssdlab(*args), said)


def test_a_non_finite_number_in_a_system_file_is_named(tmp_path):
    sysf = tmp_path / "sys.toml"
    sysf.write_text('[[drive]]\nname = "sda"\nprofile = "samsung-850-pro"\nscale = nan\n')
    one_line(_ssdlab("run", "--system", str(sysf)), f"{sysf}:4: key 'drive.0.scale': expected a finite number, got nan")


def test_a_section_key_on_a_profile_without_the_section_says_so():
    one_line(_ssdlab("run", "--profile-set", "thermal.ambient_temperature=40", *SHORT),
             "--profile-set thermal.ambient_temperature=40: the profile has no [thermal] section to change",
             "idle_power")


def test_an_array_failure_needs_its_time(tmp_path):
    sysf = tmp_path / "sys.toml"
    sysf.write_text("".join(f'[[drive]]\nname = "sd{c}"\nprofile = "samsung-850-pro"\nscale = 0.01\n' for c in "abc")
                    + '[[array]]\nname = "md0"\nlevel = 5\nmembers = ["sda", "sdb", "sdc"]\n'
                      'fail = [{ member = "sda" }]\n')
    one_line(_ssdlab("run", "--system", str(sysf), *SHORT), f"{sysf}:17: missing key 'array.0.fail.0.at'")


# ---- log files are checked before the run, as --output is --------------------------------------


@pytest.mark.parametrize("where, said", [("nodir/x/bw", "no such directory"), ("afile/bw", "not a directory")])
def test_a_log_that_cannot_be_written_fails_before_the_run(tmp_path, where, said):
    (tmp_path / "afile").write_text("")
    job = _job(tmp_path, f"direct=1\nwrite_bw_log={tmp_path / where}\n")
    out = tmp_path / "out.txt"
    one_line(_ssdlab("run", job, "--output", str(out)), f"write_bw_log: log file {tmp_path / where}_bw.1.log: {said}")
    assert not out.exists() and not (tmp_path / "nodir").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile", "j.fio"]


# ---- argument errors ------------------------------------------------------------------------


@pytest.mark.parametrize("args, said, helped", [
    (("run", "--output-format", "banana"), "Invalid value for '--output-format': 'banana' is not one of 'normal'",
     "ssdlab run --help"),
    (("run", "--bogus"), "No such option: --bogus", "ssdlab run --help"),
    (("replay", "t.trace"), "Missing option '--format'. Choose from: fio, disksim, msr, snia, blkparse",
     "ssdlab replay --help"),
    (("nosuch",), "No such command 'nosuch'", "ssdlab --help"),
    (("profiles", "show"), "Missing argument 'name'", "ssdlab profiles show --help"),
    # An option without its value took the next option as it ("0.01: no such job file").
    (("run", "--host", "--scale", "0.01"), "Option '--host' requires an argument, got the option '--scale'",
     "ssdlab run --help"),
    (("rebuild", "--raid", "5", "--drives", "--spares", "1"),
     "Option '--drives' requires an argument, got the option '--spares'", "ssdlab rebuild --help"),
])
def test_argument_errors_are_one_line_not_a_box(args, said, helped):
    p = _ssdlab(*args)
    one_line(p, said, f"; see 'python -m {helped}'")
    assert "─" not in p.stderr and "Usage:" not in p.stderr


def test_help_is_still_help():
    p = _ssdlab("run", "--help")
    assert p.returncode == 0 and "ssdlab run [OPTIONS]" in p.stdout and not p.stderr


def test_help_texts_keep_their_brackets():
    """Help goes through rich's markup, which took ``[catalogue]``, ``[network]`` and
    ``[default: 512k, mdadm's]`` for style tags and dropped them: each is escaped (``\\[``)."""
    import re

    import typer.main

    from ssdlab.cli import app

    tag = re.compile(r"(?<!\\)\[[a-z#/@][^\[\]]*\]")
    eaten = []

    def walk(c, path):
        for name, text in [("help", c.help or "")] + [(p.name, getattr(p, "help", None) or "") for p in c.params]:
            eaten.extend(f"{path} {name}: {m.group()}" for m in tag.finditer(text))
        for sub in getattr(c, "commands", {}).values():
            walk(sub, f"{path} {sub.name}")

    walk(typer.main.get_command(app), "ssdlab")
    assert not eaten, eaten
    p = _ssdlab("site", "--help", env={**os.environ, "COLUMNS": "250"})
    assert "[catalogue], [cache], [files], [[clients]]" in p.stdout, p.stdout



def test_command_help_breaks_lines_only_between_paragraphs():
    """rich keeps a help text's line breaks and wraps again at the terminal's width, so a
    docstring wrapped in the source showed a short line at each of its breaks."""
    import typer.main

    from ssdlab.cli import app

    def walk(c, path):
        paragraphs = (c.help or "").split("\n\n")
        assert all("\n" not in p for p in paragraphs), f"{path}: {c.help!r}"
        for sub in getattr(c, "commands", {}).values():
            walk(sub, f"{path} {sub.name}")

    walk(typer.main.get_command(app), "ssdlab")
    p = _ssdlab("measure", "--help", env={**os.environ, "COLUMNS": "250"})
    assert "the report has the shape `ssdlab run` gives (same JSON)." in p.stdout, p.stdout

# ---- a run's own limits and lost data: said in the user's terms ---------------------------------


def test_a_run_that_passes_its_limits_names_the_option():
    from ssdlab import api

    spec = api.build("[j]\nrw=randread\nbs=4k\nsize=8m\nruntime=0.05\ntime_based\ndirect=1\nwrite_lat_log=lat\n",
                     interval="1ms", scale=0.01)
    spec.core["limits"]["max_log_records"] = 100
    with pytest.raises(api.RunLimitError) as e:
        api.execute(spec)
    assert str(e.value).startswith("job 'j': its I/O logs passed 100 records, the most a run keeps")
    assert "log_avg_msec=" in str(e.value) and "invalid simulation input" not in str(e.value)
    spec.core["limits"] = {"max_log_records": 10**6, "max_samples": 10}
    with pytest.raises(api.RunLimitError, match=r"^--interval 1ms: the run would take 51 time-series samples, more "
                                                r"than the 10 a run keeps; a longer interval takes fewer$"):
        api.execute(spec)
    spec.core["jobs"][0].update(time_based=False, runtime_ns=None)  # its length unknown: stopped when it passes
    with pytest.raises(api.RunLimitError, match=r"^--interval 1ms: the time series passed 10 samples, the most a run "
                                                r"keeps, and the run stopped; a longer interval takes fewer$"):
        api.execute(spec)


def test_lost_data_is_the_arrays_error(tmp_path):
    sysf = tmp_path / "sys.toml"
    sysf.write_text("".join(f'[[drive]]\nname = "sd{c}"\nprofile = "samsung-850-pro"\nscale = 0.01\n' for c in "abcd")
                    + '[[array]]\nname = "md0"\nlevel = 5\nmembers = ["sda", "sdb", "sdc"]\nspares = ["sdd"]\n'
                      'fail = [{ member = "sda", at = "1ms" }, { member = "sdb", at = "2ms" }]\n')
    job = _job(tmp_path, "direct=1\nrw=randwrite\ntime_based\nfilename=/dev/md0\n")
    one_line(_ssdlab("run", job, "--system", str(sysf)),
             "ssdlab: error: array md0: sdb fails 0.002 s into the run", "the array's data is lost")
    from ssdlab import api

    with pytest.raises(api.DataLostError, match="^array md0: "):
        api.run(Path(job), system=sysf)


# ---- signals and temporary files --------------------------------------------------------------


def _started(p: subprocess.Popen) -> None:
    """Give the command time to load and start simulating (it prints nothing until the end)."""
    import time

    time.sleep(4)
    assert p.poll() is None, "the run ended before it could be signalled"


@pytest.mark.parametrize("sig, status, said", [(15, 143, "ssdlab: terminated"), (2, 130, "ssdlab: interrupted")])
def test_sigterm_ends_a_run_as_ctrl_c_does(tmp_path, sig, status, said):
    import signal

    out = tmp_path / "out.txt"
    # time_based: the quickstart job's size would end it within seconds
    p = subprocess.Popen([sys.executable, "-m", "ssdlab", "run", "--set", "runtime=600", "--set", "time_based=1",
                          "--output", str(out)],
                         cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _started(p)
    p.send_signal(signal.Signals(sig))
    _, stderr = p.communicate(timeout=60)
    assert p.returncode == status and stderr == said + "\n", (p.returncode, stderr)
    assert list(tmp_path.iterdir()) == []


def _rss_mib(pid: int) -> int:
    """A process's resident memory, MiB (0 once it is gone)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) >> 10
    except OSError:
        pass
    return 0


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="watches the run's memory in /proc")
def test_sigterm_is_heard_while_a_deep_queue_fills(tmp_path):
    """A job's first submissions are one event of the simulation: 12 million of them take
    seconds, and SIGTERM must still end the run at once (the job pauses to let it be heard)."""
    import signal
    import time

    job = tmp_path / "deep.fio"
    job.write_text("[deep]\nioengine=libaio\ndirect=1\nrw=randread\nbs=4k\niodepth=12000000\nruntime=1\ntime_based\n")
    out = tmp_path / "out.txt"
    # Stopped long before it needs the ~3 GiB its full queue would: no machine refuses it.
    env = {**os.environ, "SSDLAB_MEMORY_LIMIT": "none"}
    p = subprocess.Popen([sys.executable, "-m", "ssdlab", "run", str(job), "--scale", "0.01", "--output", str(out)],
                         cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        # The queue grows by a few hundred bytes an I/O: at 400 MiB (a loaded interpreter and
        # the small drive take about 250) it holds several hundred thousand, of 12 million.
        give_up = time.monotonic() + 120
        while _rss_mib(p.pid) < 400:
            assert p.poll() is None and time.monotonic() < give_up, "the run ended before its queue filled"
            time.sleep(0.01)
        p.send_signal(signal.SIGTERM)
        sent = time.monotonic()
        _, stderr = p.communicate(timeout=120)
        took = time.monotonic() - sent
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()
    assert p.returncode == 143 and stderr == "ssdlab: terminated\n", (p.returncode, stderr)
    assert took < 2.0, f"the run took {took:.1f} s to end after SIGTERM"
    assert list(tmp_path.iterdir()) == [job]


def test_temporary_files_of_dead_runs_are_removed(tmp_path):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    pid = int(dead.stdout)
    out = tmp_path / "out.txt"
    (tmp_path / f".out.txt.{pid}.tmp").write_text("half of a report")  # a run killed while it wrote
    (tmp_path / f".out.txt.{os.getpid()}.tmp").write_text("")  # this (live) process's: left alone
    assert _ssdlab("run", *SHORT, "--output", str(out)).returncode == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == [f".out.txt.{os.getpid()}.tmp", "out.txt"]


def test_ctrl_c_as_the_temporary_file_is_made_leaves_nothing_half_done(tmp_path, monkeypatch):
    import signal

    from ssdlab import outfiles

    real_open = os.open

    def open_then_ctrl_c(*args, **kwargs):
        fd = real_open(*args, **kwargs)
        os.kill(os.getpid(), signal.SIGINT)  # arrives the moment the temporary file exists
        return fd

    monkeypatch.setattr(outfiles.os, "open", open_then_ctrl_c)
    with pytest.raises(KeyboardInterrupt):
        outfiles.write_whole(tmp_path / "out.txt", "all of it")
    monkeypatch.undo()
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"] and (tmp_path / "out.txt").read_text() == "all of it"
