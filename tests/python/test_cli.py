"""The command line as users and external checks call it: exact forms, exit codes, errors."""

import json

import pytest

SHORT = ["--set", "runtime=0.05"]


def test_default_run_prints_fio_summary_and_iostat(cli):
    p = cli("run", *SHORT)
    assert p.returncode == 0, p.stderr
    assert "Run status group 0" in p.stdout
    assert "iostat -x" in p.stdout and "%util" in p.stdout
    assert "internal utilisation" in p.stdout
    # The quickstart job (libaio, direct=1) is modelled as written: nothing to warn about.
    assert "ioengine" not in p.stderr and "direct" not in p.stderr


def test_json_has_the_fio_fields_and_the_ssdlab_object(cli, tmp_path):
    job = tmp_path / "j.fio"
    job.write_text("[j]\nrw=randrw\ndirect=1\nbs=4k\niodepth=8\nsize=256m\nruntime=0.2\ntime_based\n")
    p = cli("run", str(job), "--profile", "samsung-850-pro", "--seed", "3", "--output-format", "json",
            "--interval", "50ms")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    j = d["jobs"][0]
    for direction in ("read", "write"):
        assert j[direction]["iops"] > 0
        assert j[direction]["bw_bytes"] > 0
        pct = j[direction]["clat_ns"]["percentile"]
        assert list(pct)[:3] == ["1.000000", "5.000000", "10.000000"] and len(pct) == 17
        assert pct["99.000000"] >= pct["50.000000"] > 0
    assert 0 < d["disk_util"][0]["util"] <= 100
    dev = d["ssdlab"]["devices"][0]
    for key in ("name", "internal_utilization", "host_bytes_written", "nand_bytes_written", "waf", "erase_count"):
        assert key in dev
    assert dev["host_bytes_written"] == j["write"]["io_bytes"]
    rows = d["ssdlab"]["timeseries"]
    assert len(rows) >= 3
    for key in ("t_s", "read_bw_bytes", "write_bw_bytes", "read_iops", "write_iops"):
        assert key in rows[0]


def test_profiles_list_and_show(cli):
    p = cli("profiles")
    assert p.returncode == 0 and "samsung-850-pro" in p.stdout
    # piped (80 columns), every name whole, as --profile takes it
    from ssdlab.config import profile_names

    listed = {line.split()[0] for line in p.stdout.splitlines() if line.strip()}
    assert set(profile_names()) <= listed, set(profile_names()) - listed
    p = cli("profiles", "show", "samsung-850-pro")
    assert p.returncode == 0
    assert 'source = "seed 003' in p.stdout


BAD_JOBS = {
    "malformed": ("[j]\nrw=randread\nbs 4k = = \n", "j.fio:3"),
    "unknown option": ("[j]\nrw=randread\nfrobnicate=3\n", "frobnicate"),
    "negative size": ("[j]\nrw=read\nsize=-4k\n", "size"),
    "zero size": ("[j]\nrw=read\nsize=0\n", "size"),
    "bs larger than size": ("[j]\nrw=read\nsize=8k\nbs=64k\n", "bs"),
    "unset variable": ("[j]\nrw=read\nbs=${NO_SUCH_VAR_X}\n", "NO_SUCH_VAR_X"),
}


@pytest.mark.parametrize("case", list(BAD_JOBS))
def test_bad_job_files_fail_with_one_line_naming_the_place(cli, tmp_path, case):
    text, must_name = BAD_JOBS[case]
    job = tmp_path / "j.fio"
    job.write_text(text)
    p = cli("run", str(job))
    assert p.returncode == 2, (p.stdout, p.stderr)
    errors = [line for line in p.stderr.splitlines() if "error" in line]
    assert len(errors) == 1, p.stderr
    assert "j.fio" in errors[0] and must_name in errors[0]
    assert "Traceback" not in p.stderr


def test_unknown_profile_and_unknown_config_key(cli, tmp_path):
    p = cli("run", "--profile", "no-such-drive")
    assert p.returncode == 2 and "unknown profile 'no-such-drive'" in p.stderr
    assert "Traceback" not in p.stderr
    bad = tmp_path / "bad.toml"
    src = cli("profiles", "show", "samsung-850-pro").stdout
    bad.write_text(src.replace("[ftl]\n", "[ftl]\nwear_leveling = true\n"))
    p = cli("run", "--profile", str(bad), *SHORT)
    assert p.returncode == 2
    line = bad.read_text().splitlines().index("wear_leveling = true") + 1
    assert f"bad.toml:{line}: unknown key 'ftl.wear_leveling'" in p.stderr
    assert "Traceback" not in p.stderr


def test_missing_job_file_and_bad_override(cli):
    p = cli("run", "no/such/job.fio")
    assert p.returncode == 2 and "no/such/job.fio" in p.stderr
    p = cli("run", "--set", "runtime")
    assert p.returncode == 2 and "OPTION=VALUE" in p.stderr


@pytest.mark.parametrize(("given", "said"), [
    ("bs=abc", "--set bs=abc: expected a size like 4k, got 'abc'"),
    ("nope=1", "--set nope=1: unknown option 'nope'"),
    ("blocksize=0", "--set blocksize=0: must be positive, got '0'"),
])
def test_a_bad_set_is_named_as_given(cli, given, said):
    """The error named the parser's ``<overrides>`` rather than the --set the user wrote."""
    p = cli("run", *SHORT, "--set", given)
    assert p.returncode == 2 and p.stderr.strip().splitlines()[-1] == f"ssdlab: error: {said}", p.stderr
