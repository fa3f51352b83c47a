"""What users see: messages printed as written, output that tools can read, errors that say
where and what (issue 12)."""

from __future__ import annotations

import json

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
    assert p.stderr == "ssdlab: error: precondition random:-1: expected a number of passes >= 0\n"


def test_warnings_print_option_text_literally(cli, tmp_path):
    job = tmp_path / "j.fio"
    job.write_text("[j]\nrw=read\nsize=1m\ndirect=1\nwrite_bw_log=:100:[bold]x[/bold]:thumbs_down:\n")
    p = cli("run", str(job), *SHORT)
    assert p.returncode == 0, p.stderr
    assert (f"ssdlab: warning: {job}:5: option 'write_bw_log=:100:[bold]x[/bold]:thumbs_down:' "
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
