"""What users see: messages printed as written, output that tools can read, errors that say
where and what (issue 12)."""

from __future__ import annotations

import json

import pytest

SHORT = ["--set", "runtime=0.02"]


def _stderr_lines(p) -> list[str]:
    return [line for line in p.stderr.splitlines() if line.strip()]


# --------------------------------------------------------------------------- literal text


def test_an_error_on_line_100_keeps_its_line_number(cli, tmp_path):
    job = tmp_path / "line100.fio"
    job.write_text("[j]\nrw=read\n" + "; filler\n" * 97 + "bs=abc\n")
    p = cli("run", str(job))
    assert p.returncode == 2
    assert p.stderr == f"ssdlab: error: {job}:100: option 'bs': expected a size like 4k, got 'abc'\n"


def test_command_line_values_are_printed_as_given(cli):
    p = cli("run", "--precondition", "random:-1")
    assert p.returncode == 2
    assert p.stderr == "ssdlab: error: precondition random:-1: expected a finite number of passes >= 0\n"


def test_warnings_print_option_text_literally(cli, tmp_path):
    job = tmp_path / "j.fio"
    job.write_text("[j]\nrw=read\nsize=1m\ndirect=1\nexec_prerun=:100:[bold]x[/bold]:thumbs_down:\n")
    p = cli("run", str(job), *SHORT)
    assert p.returncode == 0, p.stderr
    assert (f"ssdlab: warning: {job}:5: option 'exec_prerun=:100:[bold]x[/bold]:thumbs_down:' "
            "is accepted but not modelled") in p.stderr.splitlines()


def test_table_cells_from_a_profile_file_are_literal(cli, tmp_path):
    src = cli("profiles", "show", "samsung-850-pro").stdout
    prof = tmp_path / "p.toml"
    name = "drive:100:[red]x[/red]:thumbs_up:"
    prof.write_text("\n".join(f'name = "{name}"' if line.startswith("name =") else line
                              for line in src.splitlines()) + "\n")
    p = cli("size", "--target", "1GB/s", "--duration", "1h", "--profile", str(prof), "--drive-rate", "500MB/s")
    assert p.returncode == 0, p.stderr
    assert name in p.stdout


# --------------------------------------------------------------------------- output for tools


def _strict_json(text: str):
    def refuse(name):
        raise ValueError(f"not JSON: {name}")
    return json.loads(text, parse_constant=refuse)


def test_json_time_series_is_strict_json_when_an_interval_writes_nothing(cli, tmp_path):
    # Reads only: no interval writes to the NAND, so its WAF is undefined (null, not NaN).
    job = tmp_path / "reads.fio"
    job.write_text("[j]\nrw=randread\nbs=4k\nsize=16m\nruntime=0.03\ntime_based\ndirect=1\n")
    p = cli("run", str(job), "--interval", "10ms", "--output-format", "json")
    assert p.returncode == 0, p.stderr
    d = _strict_json(p.stdout)
    rows = d["ssdlab"]["timeseries"]
    assert rows and all(row["waf"] is None for row in rows)


def test_api_fio_json_dumps_strictly():
    import ssdlab

    r = ssdlab.run("[j]\nrw=randread\nbs=4k\nsize=16m\nruntime=0.03\ntime_based\n", interval="10ms")
    d = r.to_fio_json()
    json.dumps(d, allow_nan=False)
    assert d["ssdlab"]["timeseries"][0]["waf"] is None
    # pandas keeps NaN, its own missing value.
    assert r.timeseries_table()["waf"].isna().all()


# --------------------------------------------------------------------------- fio's text report


def _unit(hist: dict[int, int], lat=None):
    from ssdlab.results import DirResult, LatSummary, Unit

    n = sum(hist.values())
    lat = lat or LatSummary(n, min(hist), max(hist), sum(v * c for v, c in hist.items()) / n, 0.0)
    d = DirResult(n, 4096 * n, lat, lat, lat, dict(hist))
    empty = DirResult()
    return Unit("j", 0, [0], {"read": d, "write": empty, "trim": empty}, empty, 10**9, [n, 0, 0, 0, 0, 0, 0], {})


def test_percentile_unit_follows_fio_the_smallest_value_matters():
    from ssdlab.fioout.normal import _percentile_block

    # 20-30 us with a 12 ms tail: fio stays in usec (msec needs every value above 2 ms and
    # one above 100 ms) and rounds up when it divides.
    u = _unit({20_000: 50, 30_500: 45, 12_000_000: 5})
    lines = _percentile_block(u.dirs["read"], [50.0, 90.0, 99.0], 2)
    assert lines == ["    clat percentiles (usec):",
                     "     | 50.00th=[   20], 90.00th=[   31], 99.00th=[12000]"]
    # Everything above 2 ms and a tail past 100 ms: msec.
    u = _unit({3_000_000: 90, 150_000_000: 10})
    assert _percentile_block(u.dirs["read"], [50.0, 99.0], 2) == [
        "    clat percentiles (msec):", "     | 50.00th=[    3], 99.00th=[  150]"]
    # A tail past 100 ms but a fast median: usec, not '[0]'.
    u = _unit({1_500_000: 90, 150_000_000: 10})
    assert _percentile_block(u.dirs["read"], [50.0, 99.0], 2)[1] == "     | 50.00th=[  1500], 99.00th=[150000]"
    # Below 2 us: nsec, as fio prints a null-engine run.
    u = _unit({29: 60, 40: 39, 11_584: 1})
    assert _percentile_block(u.dirs["read"], [1.0, 99.99], 2)[0] == "    clat percentiles (nsec):"


def test_percentile_rows_wrap_like_fio():
    from ssdlab.fioout.normal import _percentile_block

    u = _unit({20_000: 99, 200_000: 1})
    plist = [1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95, 99.99]
    lines = _percentile_block(u.dirs["read"], plist, 2)
    assert lines[1] == "     |  1.00th=[   20],  5.00th=[   20], 10.00th=[   20], 20.00th=[   20],"
    assert lines[-1] == "     | 99.99th=[  200]"
    assert len(lines) == 1 + 5


def test_latency_line_units_follow_fio():
    from ssdlab.fioout.normal import _lat_line
    from ssdlab.results import LatSummary

    # fio moves to usec only when min > 2 us, max > 99.999 us and stdev > 1 us.
    assert _lat_line("slat", LatSummary(10, 1_896, 127_000, 6_610.0, 14_430.0**2 * 9)).startswith(
        "    slat (nsec): min=1896, max=127000")
    assert _lat_line("clat", LatSummary(10, 54_000, 8_481_000, 487_260.0, 1_377_280.0**2 * 9)) == (
        "    clat (usec): min=54, max=8481, avg=487.26, stdev=1377.28")
    assert _lat_line("clat", LatSummary(10, 2_192_000, 147_527_000, 10_224_800.0, 12_187_970.0**2 * 9)) == (
        "    clat (msec): min=2, max=147, avg=10.22, stdev=12.19")


def test_percentile_labels_keep_the_precision_written(tmp_path):
    import ssdlab
    from ssdlab.fioout.normal import format_normal

    def labels(plist: str) -> list[str]:
        r = ssdlab.run(f"[j]\nrw=randread\nsize=8m\nnumber_ios=64\npercentile_list={plist}\n")
        text = format_normal(r)
        block = text[text.index("clat percentiles"):].splitlines()[1]
        return [cell.split("th=")[0].strip() for cell in block.strip(" |,").split(", ")]

    assert labels("50:99:99.999") == ["50.000", "99.000", "99.999"]
    assert labels("50:99") == ["50", "99"]
    assert labels("50.5:99") == ["50.5", "99.0"]


def test_an_unwritable_output_fails_before_simulating(cli, tmp_path):
    # A job that would simulate for long: the check must come first.
    job = tmp_path / "long.fio"
    job.write_text("[j]\nrw=randwrite\nsize=100%\ntime_based\nruntime=600\ndirect=1\n")
    for target, why in ((tmp_path / "no" / "such" / "x.json", "no such directory"),
                        (tmp_path, "is a directory")):
        p = cli("run", str(job), "--output", str(target))
        assert p.returncode == 2, p.stderr
        lines = _stderr_lines(p)
        assert len(lines) == 1 and "Traceback" not in p.stderr, p.stderr
        assert lines[0].startswith(f"ssdlab: error: --output {target}: ") and why in lines[0]
    good = tmp_path / "out.txt"
    p = cli("run", "--output", str(good), *SHORT)
    assert p.returncode == 0 and "Run status group 0" in good.read_text()


def test_a_job_sized_by_filesize_moves_that_much():
    import ssdlab

    r = ssdlab.run("[x]\nrw=write\nbs=4k\nfilesize=1M\ndirect=1\n")
    assert r.to_fio_json()["jobs"][0]["write"]["io_bytes"] == 2**20  # as real fio


# --------------------------------------------------------------------------- smaller ones


def test_a_negative_seed_names_the_option(cli):
    for args in (["run", "--seed", "-1"], ["run", "--seed", str(2**64)], ["replay", "x", "--format", "fio", "--seed", "-1"]):
        p = cli(*args)
        assert p.returncode == 2, p.stderr
        assert _stderr_lines(p) == [f"ssdlab: error: --seed {args[-1]}: expected a whole number from 0 to {2**64 - 1}"]


def test_the_api_checks_the_seed():
    import pytest

    import ssdlab

    with pytest.raises(ValueError, match=r"^seed -1: expected a whole number from 0 to 18446744073709551615$"):
        ssdlab.build("[j]\nsize=1m\n", seed=-1)
    with pytest.raises(TypeError, match=r"^seed: expected a whole number, got str$"):
        ssdlab.build("[j]\nsize=1m\n", seed="3")


def test_a_directory_given_as_the_job_file(cli, tmp_path):
    p = cli("run", str(tmp_path))
    assert p.returncode == 2
    assert _stderr_lines(p) == [f"ssdlab: error: {tmp_path}: is a directory, not a job file"]


@pytest.mark.parametrize("option, what", [("--system", "a system"), ("--profile", "a profile"), ("--host", "a host"),
                                          ("--engine", "an engine")])
def test_a_directory_given_as_a_system_profile_host_or_engine_file(cli, tmp_path, option, what):
    """Said as "no such system file" (or profile, host, engine): the path is there."""
    raid = ["--raid", "5", "--drives", "3"] if option == "--engine" else []
    p = cli("run", option, str(tmp_path), *raid)
    assert p.returncode == 2
    assert _stderr_lines(p)[0].endswith(f"{tmp_path}: is a directory, not {what} file"), p.stderr
    assert len(_stderr_lines(p)) == 1, p.stderr


def test_percentage_random_must_be_a_percentage(cli, tmp_path):
    job = tmp_path / "j.fio"
    for value in ("200", "50,101", "-1"):
        job.write_text(f"[j]\nrw=randread\nsize=1m\npercentage_random={value}\n")
        p = cli("run", str(job))
        assert p.returncode == 2, p.stderr
        lines = _stderr_lines(p)
        assert len(lines) == 1 and lines[0].startswith(f"ssdlab: error: {job}:4: option 'percentage_random': "), lines
        assert "between 0 and 100" in lines[0]
    # Still a valid option that is not modelled.
    job.write_text("[j]\nrw=randread\nsize=1m\ndirect=1\npercentage_random=50,20\n")
    p = cli("run", str(job), *SHORT)
    assert p.returncode == 0 and "percentage_random=50,20' changes what fio does" in p.stderr


def test_api_mapping_arguments_are_checked():
    import pytest

    import ssdlab

    for name in ("profile_set", "overrides", "host_set", "env"):
        with pytest.raises(TypeError, match=rf"^{name}: expected a mapping"):
            ssdlab.build("[j]\nsize=1m\n", **{name: "thermal.ambient_temperature=40"})
    with pytest.raises(TypeError, match=r"^profile_set: .*got list$"):
        ssdlab.run("[j]\nsize=1m\n", profile_set=["nand.read_time=50us"])


def test_api_needs_a_job():
    import pytest

    import ssdlab

    for call in (ssdlab.run, ssdlab.build):
        with pytest.raises(TypeError, match=r"^job: .*quickstart_job\(\)"):
            call(None)


def test_profiles_lists_hosts_and_engines_with_their_kind(cli):
    import ssdlab

    p = cli("profiles")
    assert p.returncode == 0
    rows = {line.split()[0]: line.split()[1] for line in p.stdout.splitlines()[1:] if line.strip() and
            not line.startswith("   ")}
    assert rows["samsung-850-pro"] == "ssd" and rows["seagate-exos-x18-18tb"] == "hdd"
    assert rows["intel-optane-905p-480"] == "in-place"
    for host in ssdlab.host_names():
        assert rows[host] == "host"
    assert rows["md"] == "engine"
    p = cli("profiles", "show", "generic-linux")
    assert p.returncode == 0 and p.stdout.startswith('name = "generic-linux"')


def test_version(cli):
    import ssdlab
    from ssdlab import _core

    p = cli("--version")
    assert p.returncode == 0
    assert p.stdout == f"ssdlab {ssdlab.__version__}\n" and ssdlab.__version__ == _core.core_version()


def test_core_errors_in_a_host_file_name_the_file(cli, tmp_path):
    host = tmp_path / "host.toml"
    host.write_text('name = "h"\ndescription = "d"\nio_overhead = "4us"\nio_overhead_cv = 0.3\n'
                    "hz = 5000000000\n")
    p = cli("run", "--host", str(host), *SHORT)
    assert p.returncode == 2
    lines = _stderr_lines(p)
    assert len(lines) == 1 and lines[0].startswith(f"ssdlab: error: {host}:5: key 'hz': "), lines
    assert "5000000000" in lines[0]


def test_core_errors_in_a_profile_file_name_the_file(cli, tmp_path):
    src = cli("profiles", "show", "samsung-850-pro").stdout
    prof = tmp_path / "p.toml"
    prof.write_text("\n".join("queue_depth = 5000000000" if line.startswith("queue_depth") else line
                              for line in src.splitlines()) + "\n")
    p = cli("run", "--profile", str(prof), *SHORT)
    assert p.returncode == 2
    lines = _stderr_lines(p)
    assert len(lines) == 1, lines
    line = prof.read_text().splitlines().index("queue_depth = 5000000000") + 1
    assert lines[0].startswith(f"ssdlab: error: {prof}:{line}: key 'queue_depth': "), lines
    assert "5000000000" in lines[0] and "key ''" not in lines[0]


def test_core_errors_in_an_engine_file_name_the_file(cli, tmp_path):
    src = cli("profiles", "show", "md").stdout
    eng = tmp_path / "e.toml"
    eng.write_text("\n".join("stripe_head_cpu = 100000000000000000000" if line.startswith("stripe_head_cpu")
                             else line for line in src.splitlines()) + "\n")
    line = eng.read_text().splitlines().index("stripe_head_cpu = 100000000000000000000") + 1
    p = cli("run", "--raid", "5", "--drives", "4", "--engine", str(eng), *SHORT)
    assert p.returncode == 2
    lines = _stderr_lines(p)
    assert len(lines) == 1 and lines[0].startswith(f"ssdlab: error: --engine {eng}:{line}: key 'stripe_head_cpu': "), lines


def test_reads_of_blocks_never_written_are_named_once_with_the_remedy(cli, tmp_path):
    job = tmp_path / "rr.fio"
    job.write_text("[r]\nrw=randread\nbs=4k\nsize=4m\nioengine=libaio\ndirect=1\n")
    p = cli("run", str(job), "--profile", "samsung-850-pro", "--scale", "0.01")
    said = [line for line in _stderr_lines(p) if "never written" in line]
    assert p.returncode == 0 and said == ["ssdlab: warning: sda: 1,024 of the mapping units read were never written: "
                                          "the drive returns zeros for them without reading flash, so its dies idle; "
                                          "precondition it (--precondition sequential, or random:N) to measure reads "
                                          "of data"]
    p = cli("run", str(job), "--profile", "samsung-850-pro", "--scale", "0.01", "--precondition", "sequential")
    assert p.returncode == 0 and "never written" not in p.stderr


def test_an_interval_longer_than_the_run_says_there_is_no_time_series():
    """The time series was empty, and the report had no iostat per interval, without a word."""
    import ssdlab

    job = "[j]\nrw=randread\nbs=4k\nsize=8m\nruntime=0.02\ntime_based\ndirect=1\n"
    r = ssdlab.run(job, interval="10s", scale=0.01)
    assert r.timeseries() == []
    said = [w for w in r.warnings if w.startswith("--interval 10s: the run ended at ")]
    assert len(said) == 1 and said[0].endswith("before its first interval did: no time series (give a shorter interval)")
    r = ssdlab.run(job, interval="5ms", scale=0.01)
    assert r.timeseries() and not any("--interval" in w for w in r.warnings)


def test_control_characters_from_a_file_are_shown_escaped(cli, tmp_path):
    """A warning echoed a value's terminal escapes as they were (``nice=ESC[2J5`` cleared the
    screen; nice is now refused as fio refuses it, a text option still warns)."""
    job = tmp_path / "j.fio"
    job.write_text("[j]\nsize=4m\nruntime=0.02\nexec_prerun=\x1b[2J5\n")
    p = cli("run", str(job))
    assert "\x1b" not in p.stderr, p.stderr
    assert f"ssdlab: warning: {job}:4: option 'exec_prerun=\\x1b[2J5'" in p.stderr, p.stderr
    job.write_text("[j]\nsize=4m\nruntime=0.02\nnice=\x1b[2J5\n")
    p = cli("run", str(job))
    assert "\x1b" not in p.stderr and p.returncode == 2, p.stderr
    assert f"ssdlab: error: {job}:4: option 'nice': expected a whole number, got '\\x1b[2J5'" in p.stderr, p.stderr


def test_the_terse_output_says_its_warnings_and_that_it_has_no_time_series(cli, tmp_path):
    """With --output-format terse the warnings were not said (a not-modelled option, a
    fractional runtime), nor that --interval was ignored; the JSON holds them, the normal
    output says them."""
    job = tmp_path / "j.fio"
    job.write_text("[j]\nsize=4m\nruntime=0.02\nmax_latency=10\n")
    p = cli("run", str(job), "--output-format", "terse", "--interval", "5ms")
    assert p.returncode == 0 and p.stdout.startswith("3;fio-3.33;j;"), p.stderr
    assert f"ssdlab: warning: {job}:4: option 'max_latency=10' changes what fio does but is not modelled" in p.stderr
    assert ("ssdlab: warning: --interval 5ms: ignored with --output-format terse, which has no time series"
            in p.stderr), p.stderr
    p = cli("run", str(job), "--output-format", "json", "--interval", "5ms")
    assert p.returncode == 0 and "warning" not in p.stderr and "max_latency=10" in p.stdout, p.stderr


def test_info_lines_escape_the_text_of_a_users_file(cli, tmp_path):
    """Information lines echoed a job's name or a grid's values as they were (a name with ESC(0
    switched the terminal to line drawing); warnings and errors already escaped them."""
    job = tmp_path / "j.fio"
    job.write_text("[red\x1b(0job]\nsize=4m\nruntime=0.02\n")
    p = cli("run", str(job))
    assert p.returncode == 0 and "\x1b" not in p.stderr, p.stderr
    assert "ssdlab: job 'red\\x1b(0job' runs on files" in p.stderr, p.stderr
    (tmp_path / "job.fio").write_text("[j]\nsize=4m\n")
    grid = tmp_path / "g.toml"
    grid.write_text('job = "job.fio"\n[grid]\n"job.description" = ["a\\u001b[2Jb", "c"]\n')
    p = cli("sweep", str(grid), "--dry-run")
    assert p.returncode == 0 and "\x1b" not in p.stdout and "0    a\\x1b[2Jb        to run" in p.stdout, p.stdout


def test_printable_escapes_controls_and_keeps_what_it_is_told():
    from ssdlab.printable import escape_controls

    assert escape_controls("a\x1b[2Jb") == "a\\x1b[2Jb"
    assert escape_controls("a\nb\x07", keep="\n") == "a\nb\\x07" and escape_controls("plain") == "plain"
