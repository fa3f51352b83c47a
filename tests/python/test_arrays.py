"""Arrays as targets: the system file's [[array]], the --raid shorthand, fio's filename=,
results as fio reports an md array (aggr_* and each member), and one-line errors."""

import json
import re

import jsonschema
import pytest
from typer.testing import CliRunner

import ssdlab
from ssdlab import SystemFileError, _core
from ssdlab.api import RunSpec, build, execute
from ssdlab.cli import app
from ssdlab.fio import FioJobError
from ssdlab.fioout.normal import format_normal

def drive_entries(letters: str, profile: str = "samsung-850-pro", size: str = "scale = 0.02") -> str:
    """``[[drive]]`` tables named sd + each letter, of one profile and size."""
    return "".join(f'[[drive]]\nname = "sd{c}"\nprofile = "{profile}"\n{size}\n' for c in letters)


#: Drives small enough for a data-verified array (and quick to rebuild).
SMALL_SIZE = 'profile_set = { capacity = "150000000" }'

DRIVES = drive_entries("abcde")

ARRAY = DRIVES + """
[[array]]
name = "md0"
level = 5
chunk = "64k"
engine = "md"
members = ["sda", "sdb", "sdc", "sdd"]
"""

JOB = """
[w]
filename=/dev/md0
direct=1
rw=randwrite
bs=4k
iodepth=16
size=256m
number_ios=2000
"""


def write(tmp_path, text, name="system.toml"):
    f = tmp_path / name
    f.write_text(text)
    return f


def test_an_array_target_reports_itself_and_every_member(tmp_path):
    r = ssdlab.run(JOB, system=write(tmp_path, ARRAY), seed=1)
    assert r.device_names == ["md0", "sde"], "arrays first, then drives in no array"
    assert r.all_device_names == ["md0", "sda", "sdb", "sdc", "sdd", "sde"]
    fio = r.to_fio_json()
    names = [d["name"] for d in fio["disk_util"]]
    # fio lists the disks its jobs used, and an md device's slaves; iostat lists every disk.
    assert names == ["md0", "sda", "sdb", "sdc", "sdd"]
    md0 = fio["disk_util"][0]
    members = fio["disk_util"][1:5]
    assert md0["write_ios"] == 2000
    # fio's aggr_* fields: the members' counters averaged; aggr_util the busiest member's.
    assert md0["aggr_write_ios"] == sum(m["write_ios"] for m in members) // 4
    assert md0["aggr_read_ios"] == sum(m["read_ios"] for m in members) // 4
    assert md0["aggr_util"] == max(m["util"] for m in members)
    # ... and every other aggr_* field likewise (fio spells one of them aggr_write_merge).
    for aggr, key in [("read_merges", "read_merges"), ("write_merge", "write_merges"),
                      ("read_ticks", "read_ticks"), ("write_ticks", "write_ticks"), ("in_queue", "in_queue")]:
        assert md0[f"aggr_{aggr}"] == sum(m[key] for m in members) // 4, aggr
    assert md0["aggr_write_ticks"] > 0 and md0["aggr_in_queue"] > 0
    assert all("aggr_util" not in m for m in members)
    # RAID 5 small writes: two member reads and two member writes each; and md's write-intent
    # bitmap (mdadm adds one to 256 GB members), whose updates write a page to each member.
    i = r.internal("md0")
    assert i["bitmap_chunk_bytes"] == 64 << 20 and i["bitmap_bits_set"] == 2  # 85 MB of each member
    assert i["bitmap_updates"] >= 1 and i["bitmap_write_bytes"] == 4 * 4096 * i["bitmap_updates"]
    assert sum(m["write_ios"] for m in members) == 4000 + i["bitmap_write_bytes"] // 4096
    # A write whose stripe head is still whole in md's stripe cache reads nothing.
    assert sum(m["read_ios"] for m in members) == 2 * (2000 - i["stripe_cache_hits"])
    assert i["kind"] == "array" and i["level"] == "raid5" and i["members"] == ["sda", "sdb", "sdc", "sdd"]
    host = i["host_bytes_written"]
    assert (i["member_bytes_written"] - i["bitmap_write_bytes"]) / host == pytest.approx(2.0)
    assert i["rmw_stripe_heads"] + i["rcw_stripe_heads"] == 2000
    from ssdlab.fioout.normal import format_normal

    text = format_normal(r)
    assert "write-intent bitmap (64.0MiB chunks): 2 bits set in 2 updates" in text
    assert f"found whole in the stripe cache {i['stripe_cache_hits']}; writes joined to the one before 0;" in text
    # fio 3.33's disk stats: md0 indented under its slaves' averages, no sectors (later fio adds them)
    assert re.search(r"^    md0: ios=0/2000, merge=0/0, ticks=0/\d+, in_queue=\d+, util=[\d.]+%, "
                     r"aggrios=\d+/\d+, aggrmerge=\d+/\d+, aggrticks=\d+/\d+, aggrin_queue=\d+, "
                     r"aggrutil=[\d.]+%$", text, re.M)
    assert re.search(r"^  sda: ios=\d+/\d+, merge=\d+/\d+, ticks=\d+/\d+, in_queue=\d+, util=[\d.]+%$", text, re.M)
    devices = {d["name"]: d for d in fio["ssdlab"]["devices"]}
    assert devices["sda"]["array"] == "md0" and "array" not in devices["md0"]
    assert devices["sda"]["kind"] == "nand-ssd" and devices["sda"]["waf"] is not None
    assert [row["name"] for row in fio["ssdlab"]["iostat"]] == [*names, "sde"]
    assert list(r.iostat_table().index) == [*names, "sde"]
    assert r.iostat("sdb")["w/s"] > 0


def test_md_joins_sequential_writes_in_flight_into_whole_rows():
    """md adds a later write's pages to stripe heads still waiting (add_stripe_bio): 1 MiB
    writes 16 deep on a RAID 5 of four with 512 KiB chunks (1.5 MiB rows) are written as
    whole rows, without reads, where one at a time each row is written twice and read once."""
    job = "[w]\nfilename=/dev/md0\ndirect=1\nrw=write\nbs=1m\nioengine=libaio\niodepth={}\nsize=256m\n"
    sysd = ssdlab.raid("samsung-850-pro", level=5, drives=4, chunk="512k", scale=0.02)
    deep = ssdlab.run(job.format(16), system=sysd, seed=1).internal("md0")
    alone = ssdlab.run(job.format(1), system=sysd, seed=1).internal("md0")
    assert alone["joined_writes"] == 0 and alone["member_bytes_read"] / alone["host_bytes_written"] > 0.4
    assert deep["joined_writes"] > 100
    assert deep["member_bytes_read"] < 0.02 * deep["host_bytes_written"]
    assert deep["full_stripe_heads"] > 0.95 * deep["stripe_heads"]


def test_the_raid_shorthand_is_the_same_system():
    sysd = ssdlab.raid("samsung-850-pro", level=5, drives=4, chunk="64k", scale=0.02)
    assert [d.name for d in sysd.drives] == ["sda", "sdb", "sdc", "sdd"]
    r = ssdlab.run(JOB.replace("/dev/md0", "/dev/anything"), system=sysd, seed=1)
    assert r.device_names == ["md0"]
    assert r.to_fio_json()["disk_util"][0]["write_ios"] == 2000
    assert "/dev/anything is not a device of this run: the job runs on its one device, /dev/md0" in " ".join(r.warnings)
    with pytest.raises(FioJobError, match="/dev/sdb is a member of array md0; jobs address the array"):
        build(JOB.replace("/dev/md0", "/dev/sdb"), system=sysd)
    nvme = ssdlab.raid("samsung-970-pro-512", level=0, drives=3)
    assert [d.name for d in nvme.drives] == ["nvme0n1", "nvme1n1", "nvme2n1"]


def test_the_raid_shorthand_preconditions_members_and_leaves_a_spare_new():
    sysd = ssdlab.raid("samsung-850-pro", level=5, drives=3, spares=1, chunk="64k", scale=0.01,
                       precondition="sequential")
    arr = sysd.arrays[0]
    assert [d.precondition for d in arr.members] == ["sequential"] * 3
    assert [d.precondition for d in arr.spares] == [None]
    # What the core is told: the members filled, the spare not.
    kinds = [m.target_core()["precondition"]["kind"] for m in arr.members + arr.spares]
    assert kinds == ["sequential"] * 3 + ["none"]


def test_random_writes_to_a_raid5_of_full_drives_keep_going():
    """Regression: a member's dies, their GC given up on blocks all valid, got garbage again
    from overwrites placed elsewhere but never collected it; once every die had starved the
    member stopped, 8 s into this run ("the simulation stalled")."""
    sysd = ssdlab.raid("samsung-850-pro", level=5, drives=4, chunk="512k", scale=0.001, precondition="sequential")
    job = "[w]\nfilename=/dev/md0\nrw=randwrite\nbs=4k\niodepth=16\nioengine=libaio\ndirect=1\ntime_based\nruntime=12\n"
    r = ssdlab.run(job, system=sysd, seed=1)
    fio = r.to_fio_json()
    assert fio["jobs"][0]["write"]["runtime"] >= 12_000
    assert fio["jobs"][0]["write"]["total_ios"] > 200_000


def test_a_command_line_precondition_leaves_a_system_files_spare_new(tmp_path):
    text = ARRAY + 'spares = ["sde"]\n'
    sysd = ssdlab.load_system(write(tmp_path, text), precondition="sequential")
    arr = sysd.arrays[0]
    assert [d.precondition for d in arr.members] == ["sequential"] * 4
    assert [d.precondition for d in arr.spares] == [None]
    # A spare's own entry still sets its state.
    own = text.replace('name = "sde"\n', 'name = "sde"\nprecondition = "random:1"\n')
    assert ssdlab.load_system(write(tmp_path, own), precondition="sequential").arrays[0].spares[0].precondition == "random:1"


def test_cli_raid_runs_and_reports_json():
    out = CliRunner().invoke(app, ["run", "--raid", "10", "--drives", "4", "--chunk", "64k", "--scale", "0.02",
                                   "--set", "runtime=0.05", "--output-format", "json"])
    assert out.exit_code == 0, out.output
    fio = json.loads(out.stdout)
    assert [d["name"] for d in fio["disk_util"]] == ["md0", "sda", "sdb", "sdc", "sdd"]
    two = CliRunner().invoke(app, ["run", "--raid", "5", "--drives", "4", "--engine-set", "stripe_cache_size=512", "b=2"])
    assert two.exit_code != 0 and "b=2: no such job file (a KEY=VALUE? each --set" in two.output
    bad = CliRunner().invoke(app, ["run", "--raid", "5", "--drives", "2"])
    assert bad.exit_code != 0
    assert "raid5 needs at least 3 drives, got 2" in bad.output
    assert len(bad.output.strip().splitlines()) == 1
    bad = CliRunner().invoke(app, ["run", "--drives", "4"])
    assert "add --raid LEVEL" in bad.output


def test_engine_hwraid_is_the_built_in_controller():
    from ssdlab.config.profile import load_engine
    assert load_engine("hwraid")[0] == load_engine("adaptec-6805")[0]
    out = CliRunner().invoke(app, ["run", "--raid", "5", "--drives", "3", "--engine", "hwraid", "--scale", "0.02",
                                   "--set", "runtime=0.02", "--output-format", "json"])
    assert out.exit_code == 0, out.output
    md0 = next(d for d in json.loads(out.stdout)["ssdlab"]["devices"] if d["name"] == "md0")
    assert md0["engine"] == "hwraid" and md0["destaged_bytes"] > 0, "a controller's cache destages"
    bad = CliRunner().invoke(app, ["run", "--raid", "5", "--drives", "3", "--engine", "hwraidx"])
    assert bad.exit_code != 0 and "hwraid (= adaptec-6805)" in bad.output
    # Its text report speaks of its processor, not of an md stripe cache it does not have.
    text = CliRunner().invoke(app, ["run", "--raid", "5", "--drives", "3", "--engine", "hwraid", "--scale", "0.02",
                                    "--set", "runtime=0.02"]).output
    assert "controller processor busy" in text and "stripe cache" not in text and "stripe threads" not in text


def test_a_failure_the_run_ends_before_is_a_warning(tmp_path):
    late = ARRAY + 'fail = [{ member = "sdb", at = "100s" }, { member = "sdc", at = "0s" }]\nspares = ["sde"]\n'
    r = ssdlab.run(JOB, system=write(tmp_path, late), seed=1)
    assert r.internal("md0")["failed"] == ["sdc"]
    assert [w for w in r.warnings if "fail" in w] == [
        f"array md0: sdb was to fail at 100 s, but the run ended at {r.elapsed_ns / 1e9:g} s: it did not fail"]


def test_a_built_array_run_is_plain_data_the_core_reads(tmp_path):
    spec = build(JOB, system=write(tmp_path, ARRAY), seed=2)
    jsonschema.validate(spec.core, json.loads(_core.spec_schema()))
    again = RunSpec.model_validate_json(spec.model_dump_json())
    assert again.targets[0].members[1].name == "sdb"
    a = execute(spec).to_fio_json()["disk_util"]
    b = execute(again).to_fio_json()["disk_util"]
    assert a == b
    assert spec.sources["array.md0.engine.stripe_cache_size"].startswith("md's default")


def test_a_member_failed_from_the_start_serves_reads_from_the_others(tmp_path):
    text = ARRAY + 'fail = [{ member = "sdb", at = 0 }]\n'
    job = JOB.replace("randwrite", "randread")
    r = ssdlab.run(job, system=write(tmp_path, text), seed=1)
    assert r.internal("md0")["failed"] == ["sdb"]
    assert r.internal("md0")["reconstructed_bytes"] > 0
    sdb = r.to_fio_json()["disk_util"][2]
    assert (sdb["name"], sdb["read_ios"], sdb["write_ios"]) == ("sdb", 0, 0)


@pytest.mark.parametrize("change, line, message", [
    (('level = 5', 'level = 4'), 2, "RAID level 4: expected one of 0, 1, 10, 5, 6"),
    # pydantic's words ("Input should be a valid integer") said as the value and what was expected
    (('level = 5', 'level = "5"'), 2, "key 'array.0.level': '5': expected a whole number"),
    (('members = ["sda", "sdb", "sdc", "sdd"]', 'members = "sda"'), 5, "key 'array.0.members': 'sda': expected a list"),
    (('name = "md0"', 'name = 0'), 1, "key 'array.0.name': 0: expected a text in quotes"),
    (('chunk = "64k"', 'chunk = "6k"'), 3, "expected a positive multiple of 4 KiB"),
    (('chunk = "64k"', 'chunk = true'), 3, "key 'array.0.chunk': true: expected a size"),
    (('chunk = "64k"', 'chunk = "12k"'), 3, "md's raid5 needs a power of two, got 12288 bytes"),
    (('"sdd"]', '"sdd"]\nfail = [{ member = "sdb", at = "1e30s" }]'), 6,
     "at = '1e30s': expected a time from 0 to 292 years"),
    (('engine = "md"', 'engine = "mdx"'), 4, "unknown engine 'mdx'"),
    (('"sdd"]', '"sdz"]'), 5, "'sdz' is not a drive of the system"),
    (('members = ["sda", "sdb", "sdc", "sdd"]', 'members = ["sda", "sdb"]'), 5,
     "array 'md0': raid5 needs at least 3 drives, got 2"),
    (('name = "md0"', 'name = "sde"'), 1, "device name 'sde' is used twice"),
    (('engine = "md"', 'engine = "md"\nengine_set = { stripe_cache_size = "many" }'), 5,
     "engine 'md', engine_set stripe_cache_size=many: key 'stripe_cache_size'"),
    (('engine = "md"', 'engine = "md"\nengine_set = { stripe_cache_sise = 512 }'), 5,
     "unknown key 'stripe_cache_sise'"),
    (('engine = "md"', 'engine = "md"\nengine_set = { stripe_cache_max = 100 }'), 5,
     "stripe_cache_max=100: key 'stripe_cache_max': 100: expected at least stripe_cache_size (256)"),
    (('"sdd"]', '"sdd"]\nfail = [{ membr = "sdb", at = "1s" }]'), 6,
     "unknown key 'array.0.fail.0.membr' (expected 'member')"),
])
def test_bad_arrays_are_one_line_errors_at_their_line(tmp_path, change, line, message):
    """``line``: the key's line, counted from the ``[[array]]`` header."""
    text = ARRAY.replace(*change)
    f = write(tmp_path, text)
    with pytest.raises(SystemFileError) as e:
        build(JOB, system=f)
    first_array_line = text.splitlines().index("[[array]]") + 1
    assert str(e.value).startswith(f"{f}:{first_array_line + line}:"), str(e.value)
    assert message in str(e.value)
    assert "\n" not in str(e.value)


def test_a_member_larger_than_the_others_is_refused(tmp_path):
    text = ARRAY.replace('name = "sdd"\nprofile = "samsung-850-pro"\nscale = 0.02',
                         'name = "sdd"\nprofile = "samsung-850-pro"\nscale = 0.03')
    with pytest.raises(SystemFileError, match="the members of an array must be the same size "
                                              r"\(a drive's profile_set capacity can make them so\)") as e:
        build(JOB, system=write(tmp_path, text))
    assert "\n" not in str(e.value)


def test_members_of_different_profiles_make_an_array_once_their_sizes_agree(tmp_path):
    drives = drive_entries("ab", size="scale = 0.01")
    nvme = '[[drive]]\nname = "nvme0n1"\nprofile = "samsung-970-pro-512"\nscale = 0.01\n'
    array = '[[array]]\nname = "md0"\nlevel = 5\nchunk = "64k"\nmembers = ["sda", "sdb", "nvme0n1"]\n'
    with pytest.raises(SystemFileError, match="must be the same size"):
        build(JOB, system=write(tmp_path, drives + nvme + array))
    same = nvme + 'profile_set = { capacity = "256060514304" }\n'
    r = ssdlab.run(JOB, system=write(tmp_path, drives + same + array), seed=1)
    fio = r.to_fio_json()
    assert [d["name"] for d in fio["disk_util"]] == ["md0", "sda", "sdb", "nvme0n1"]
    assert fio["disk_util"][0]["write_ios"] == 2000 and fio["disk_util"][3]["write_ios"] > 0


def test_jobs_address_the_array_not_its_members(tmp_path):
    with pytest.raises(FioJobError, match=r"/dev/sdb is a member of array md0; jobs address the array \(/dev/md0\)") as e:
        build(JOB.replace("/dev/md0", "/dev/sdb"), system=write(tmp_path, ARRAY))
    assert "\n" not in str(e.value)
    with pytest.raises(FioJobError, match="/dev/md9 names no device of the system") as e:
        build(JOB.replace("/dev/md0", "/dev/md9"), system=write(tmp_path, ARRAY))
    assert "\n" not in str(e.value)


def test_md_gets_mdadms_bitmap_on_members_over_100_gib_only():
    """mdadm adds an internal write-intent bitmap (64 MiB chunks) when each member offers
    more than 100 GiB, judged on the real drive's size, not the scaled simulation's."""
    def chunk(profile, **kw):
        arr = ssdlab.raid(profile, level=5, drives=3, chunk="64k", scale=0.02, **kw).arrays[0]
        return arr.core()["engine"]["bitmap_chunk_bytes"], arr

    big, arr = chunk("samsung-850-pro")  # 256 GB
    assert big == 64 << 20
    assert chunk("samsung-830-64gb")[0] == 0  # 64 GB: none
    assert chunk("samsung-830-64gb", engine_set={"bitmap": "internal", "bitmap_chunk": "1MiB"})[0] == 1 << 20
    assert chunk("samsung-850-pro", engine_set={"bitmap": "none"})[0] == 0
    # The bitmap's pages live past the data (here in the tail beyond the last whole chunk);
    # Python and the core agree on what is left.
    for a in (arr, chunk("samsung-850-pro", engine_set={"bitmap": "none"})[1],
              chunk("samsung-850-pro", engine_set={"bitmap_chunk": "4KiB"})[1]):
        assert a.capacity == 2 * a.member_bytes
    tiny = chunk("samsung-850-pro", engine_set={"bitmap_chunk": "4KiB"})[1].member_bytes
    assert arr.member_bytes - tiny == 2 * (64 << 10), "38 pages: the tail past the last chunk and two more"
    # A bitmap chunk md would refuse is a one-line error naming the key and how it was set.
    with pytest.raises(Exception, match="--engine-set bitmap_chunk=3MiB: key 'bitmap_chunk'"):
        ssdlab.raid("samsung-850-pro", level=5, drives=3, chunk="64k", scale=0.02,
                    engine_set={"bitmap_chunk": "3MiB"})


REBUILDING = ARRAY.replace('members = ["sda", "sdb", "sdc", "sdd"]',
                           'members = ["sda", "sdb", "sdc"]\nspares = ["sdd"]\nfail = [{ member = "sdb", at = "0.1s" }]')


def test_a_rebuild_shows_its_progress_in_the_report_the_json_and_the_time_series(tmp_path):
    job = "[w]\nfilename=/dev/md0\ndirect=1\nrw=randrw\nbs=64k\niodepth=8\ntime_based\nruntime=1\n"
    r = ssdlab.run(job, system=write(tmp_path, REBUILDING), seed=1, interval="200ms")
    i = r.internal("md0")
    assert (i["rebuild_member"], i["rebuild_replaces"], i["rebuild_started_s"]) == ("sdd", "sdb", 0.1)
    assert i["rebuild_finished_s"] is None, "a 1 s run rebuilds part of the replacement"
    assert 0 < i["rebuild_done_bytes"] < i["rebuild_target_bytes"]
    assert i["rebuild_progress"] == i["rebuild_done_bytes"] / i["rebuild_target_bytes"]
    assert i["rebuild_rate_bytes"] == pytest.approx(i["rebuild_done_bytes"] / (r.elapsed_ns / 1e9 - 0.1))
    # Per interval: in sync at its end never falls, and the rates add up to the report's total.
    ts = r.timeseries("md0")
    done = [row["rebuild_done_bytes"] for row in ts if "rebuild_done_bytes" in row]
    assert done == sorted(done) and done[-1] == i["rebuild_done_bytes"]
    t = [0.0] + [row["t_s"] for row in ts]
    moved = sum(row.get("rebuild_rate_bytes", 0.0) * (t1 - t0) for row, t0, t1 in zip(ts, t, t[1:]))
    assert moved == pytest.approx(done[-1])
    assert "rebuild_done_bytes" not in r.timeseries("sda")
    md0 = next(d for d in r.to_fio_json()["ssdlab"]["devices"] if d["name"] == "md0")
    assert md0["rebuild_progress"] == i["rebuild_progress"]
    text = CliRunner().invoke(app, ["run", str(write(tmp_path, job, "j.fio")), "--system",
                                    str(tmp_path / "system.toml"), "--seed", "1"]).output
    assert "rebuild onto sdd (replacing sdb) from 0.100 s:" in text
    assert "% in sync at the end of the run; yielded to other I/O" in text


def test_a_rebuild_starved_of_stripe_heads_counts_its_jiffies_in_the_report(tmp_path):
    # md's sync thread sleeps a jiffy after it waited for a stripe head (raid5_sync_request):
    # a 17-head cache beside 32 one-deep writers makes it wait; the JSON counts the sleeps and
    # the text line names them. Without the sleep (sync_wait_sleep 0) the line says nothing
    # of them.
    job = "[w]\nfilename=/dev/md0\ndirect=1\nrw=randwrite\nbs=4k\niodepth=1\nnumjobs=32\ntime_based\nruntime=1\n"
    write(tmp_path, job, "j.fio")

    def with_engine(keys: str):
        system = write(tmp_path, REBUILDING.replace('engine = "md"', f'engine = "md"\nengine_set = {{ {keys} }}'))
        slept = ssdlab.run(job, system=system, seed=1).internal("md0")["rebuild_head_wait_sleeps"]
        text = CliRunner().invoke(app, ["run", str(tmp_path / "j.fio"), "--system", str(system), "--seed", "1"]).output
        assert "rebuild onto sdd (replacing sdb)" in text
        return slept, text

    slept, text = with_engine("stripe_cache_size = 17")
    assert slept > 0
    assert f", slept a jiffy after waiting for stripe heads {slept}" in text
    slept, text = with_engine('stripe_cache_size = 17, sync_wait_sleep = "0"')
    assert slept == 0 and "slept a jiffy" not in text


def test_an_array_without_a_rebuild_or_a_controller_cache_says_so_with_nones_and_zeros(tmp_path):
    i = ssdlab.run(JOB, system=write(tmp_path, ARRAY), seed=1).internal("md0")
    assert i["rebuild_member"] is None and i["rebuild_progress"] is None
    assert (i["destaged_bytes"], i["cache_read_hits"], i["verified_bytes"], i["data_errors"]) == (0, 0, 0, 0)


def test_a_hardware_controllers_cache_is_in_the_arrays_report(tmp_path):
    text = ARRAY.replace('engine = "md"', 'engine = "adaptec-6805"')
    r = ssdlab.run(JOB, system=write(tmp_path, text), seed=1)
    i = r.internal("md0")
    assert i["destaged_bytes"] + i["cache_dirty_bytes"] >= 2000 * 4096, "every host write went through the cache"
    out = CliRunner().invoke(app, ["run", str(write(tmp_path, JOB, "j.fio")), "--system",
                                   str(tmp_path / "system.toml"), "--seed", "1"]).output
    assert "controller cache: " in out and " destaged, " in out
    # The controller's own queue depth (aacraid's 256 tags for an array) reaches the core.
    hw = ssdlab.raid("samsung-830-64gb", level=5, drives=3, chunk="64k", engine="adaptec-6805", scale=0.02)
    assert hw.arrays[0].core()["engine"]["queue_depth"] == 256


def test_a_second_rebuild_starts_its_own_progress_in_the_time_series(tmp_path):
    """sdb fails once sda's rebuild is done (at about 5 s): its rebuild is a pass of its own."""
    drives = drive_entries("abcde", size="scale = 0.005")
    system = write(tmp_path, drives + '[[array]]\nname = "md0"\nlevel = 1\nchunk = "64k"\nmembers = ["sda", "sdb", "sdc"]\n'
                   'spares = ["sdd", "sde"]\nfail = [{ member = "sda", at = 0 }, { member = "sdb", at = "6s" }]\n')
    r = ssdlab.run("[w]\nfilename=/dev/md0\ndirect=1\nrw=randread\nbs=64k\niodepth=2\nruntime=12\ntime_based\n",
                   system=system, interval="250ms")
    rows = [row for row in r.timeseries("md0") if "rebuild_done_bytes" in row]
    done = [row["rebuild_done_bytes"] for row in rows]
    assert any(b < a for a, b in zip(done, done[1:])), "the second rebuild starts from nothing"
    assert min(row["rebuild_rate_bytes"] for row in rows) >= 0
    assert r.internal("md0")["rebuild_member"] == "sde"


SMALL = drive_entries("abcde", "intel-x25-e-32", SMALL_SIZE)
VERIFIED = SMALL + """
[[array]]
name = "md0"
level = 5
chunk = "16k"
members = ["sda", "sdb", "sdc", "sdd"]
spares = ["sde"]
fail = [{ member = "sdc", at = "0.05s" }]
verify_data = true
"""

MIXED = """
[v]
filename=/dev/md0
direct=1
rw=randrw
bsrange=512-64k
iodepth=8
runtime=0.4
time_based
"""


@pytest.mark.parametrize("engine", ["md", "streaming"])
def test_a_system_file_turns_data_verification_on(tmp_path, engine):
    """``verify_data = true``: every read of a degraded and rebuilding RAID 5 is checked."""
    text = VERIFIED.replace('chunk = "16k"', f'chunk = "16k"\nengine = "{engine}"')
    r = ssdlab.run(MIXED, system=write(tmp_path, text), seed=3)
    a = r.internal("md0")
    assert a["rebuild_member"] == "sde" and a["rebuild_done_bytes"] > 0
    assert a["verified_bytes"] > 1 << 20 and a["data_errors"] == 0
    plain = ssdlab.run(MIXED, system=write(tmp_path, text.replace("verify_data = true\n", "")), seed=3)
    assert plain.internal("md0")["verified_bytes"] == 0


def test_verify_data_on_the_command_line_and_where_it_cannot_be(tmp_path):
    job = write(tmp_path, MIXED, "v.fio")
    small = ["--profile", "intel-x25-e-32", "--profile-set", "capacity=150000000", "--raid", "6", "--drives", "5"]
    out = CliRunner().invoke(app, ["run", str(job), *small, "--verify-data"])
    assert out.exit_code == 0, out.output
    assert "data verified:" in out.output and ", 0 errors" in out.output
    out = CliRunner().invoke(app, ["run", str(job), *small, "--engine", "hwraid", "--verify-data"])
    assert out.exit_code == 2 and "verify_data: is for the md and streaming engines" in out.output
    out = CliRunner().invoke(app, ["run", str(job), "--profile", "intel-x25-e-32", "--verify-data"])
    assert out.exit_code == 2 and "describe a --raid array" in out.output
    text = VERIFIED.replace('members = ["sda"', 'engine = "hwraid"\nmembers = ["sda"')
    with pytest.raises(SystemFileError) as e:
        build(MIXED, system=write(tmp_path, text))
    line = text.splitlines().index("verify_data = true") + 1
    assert str(e.value).startswith(f"{tmp_path / 'system.toml'}:{line}:"), str(e.value)


def test_settings_an_array_cannot_use_are_warnings():
    """RAID 1 ignores a chunk (mdadm says so); RAID 0 never uses a spare; spares are scaled too."""
    base = ["run", "--profile", "samsung-850-pro", "--scale", "0.01", "--set", "runtime=0.02"]
    for chunk in ("64k", "512k"):  # md's default size given explicitly is still a chunk asked for
        out = CliRunner().invoke(app, [*base, "--raid", "1", "--drives", "2", "--chunk", chunk])
        assert out.exit_code == 0 and "raid1 has no chunks; its chunk size is ignored" in out.output, chunk
    out = CliRunner().invoke(app, [*base, "--raid", "1", "--drives", "2"])
    assert "chunk size is ignored" not in out.output
    out = CliRunner().invoke(app, [*base, "--raid", "0", "--drives", "2", "--spares", "1"])
    assert out.exit_code == 0 and "raid0 has no redundancy to rebuild, so spares sdc are never used" in out.output
    assert "sda, sdb, sdc: simulating 0.01" in out.output
    # md's RAID 5 takes discards only with a module parameter Linux leaves off.
    out = CliRunner().invoke(app, [*base, "--raid", "5", "--drives", "3", "--set", "rw=randtrim"])
    assert out.exit_code == 0 and "devices_handle_discard_safely" in out.output
    out = CliRunner().invoke(app, [*base, "--raid", "5", "--drives", "3", "--set", "rw=randwrite"])
    assert "devices_handle_discard_safely" not in out.output


STREAMING_REBUILD = drive_entries("abcde", size="scale = 0.001") + """
[[array]]
name = "md0"
level = 5
chunk = "64k"
engine = "streaming"
members = ["sda", "sdb", "sdc", "sdd"]
spares = ["sde"]
fail = [{ member = "sdb", at = 0 }]
"""


@pytest.mark.parametrize("depth, share", [(1, None), (64, "0.01"), (64, "0.5")])
def test_a_streaming_rebuild_spares_a_light_host_and_shares_with_a_heavy_one(tmp_path, depth, share):
    """A reader at queue depth 1 does not wait behind a drive queue full of the rebuild's
    1 MiB units (it did: 39 reads a second); at depth 64 the share decides the split."""
    text = STREAMING_REBUILD + (f'engine_set = {{ rebuild_share = {share} }}\n' if share else "")
    job = f"[r]\nfilename=/dev/md0\nrw=randread\nbs=64k\nioengine=libaio\ndirect=1\niodepth={depth}\nruntime=0.5\ntime_based\n"
    r = ssdlab.run(job, system=write(tmp_path, text), seed=1)
    host = r.to_fio_json()["jobs"][0]["read"]
    rebuild = r.internal("md0")["rebuild_rate_bytes"]
    # Reads share rows with each other and with the rebuild's units: none waits for a row.
    assert r.internal("md0")["stripe_waits"] == 0
    if depth == 1:
        assert host["iops"] > 400, host["iops"]
        assert rebuild > 400 * 2**20, "an array the host barely uses still rebuilds at the drives' speed"
    elif share == "0.01":
        assert host["bw_bytes"] > 1000e6 and rebuild < 40e6, (host["bw_bytes"], rebuild)
    else:
        assert host["bw_bytes"] < 850e6 and rebuild > 150e6, (host["bw_bytes"], rebuild)


#: A RAID 6 of six X25-Es cut to 150 MB with two spares; tests add its failures.
RAID6_TWO_SPARES = drive_entries("abcdefgh", "intel-x25-e-32", SMALL_SIZE) + """
[[array]]
name = "md0"
level = 6
chunk = "16k"
members = ["sda", "sdb", "sdc", "sdd", "sde", "sdf"]
spares = ["sdg", "sdh"]
"""


def test_a_failure_during_a_rebuild_restarts_it_as_one_pass_over_both_spares(tmp_path):
    """Two members of a RAID 6 fail, with two spares, the second while the first is rebuilt:
    md interrupts the recovery and recovers both spares in one pass, the first keeping what it
    had in sync. Both are in the report, done at the same time, and the array is whole well
    before two rebuilds one after the other would make it: 1.07 times one rebuild's time, where
    it took 2.16 times when the second spare waited for the first to finish."""
    array = RAID6_TWO_SPARES + 'engine_set = { sync_speed_max = "2GB/s" }\n'
    job = "[w]\nfilename=/dev/md0\nrw=randrw\nbs=16k\nioengine=libaio\ndirect=1\niodepth=4\nruntime=4\ntime_based\n"
    both = 'fail = [{ member = "sdb", at = "0.05s" }, { member = "sde", at = "0.1s" }]\n'
    r = ssdlab.run(job, system=write(tmp_path, array + both), seed=2)
    a = r.internal("md0")
    (first,) = a["earlier_rebuilds"]
    assert (first["rebuild_member"], first["rebuild_replaces"]) == ("sdg", "sdb")
    assert (a["rebuild_member"], a["rebuild_replaces"]) == ("sdh", "sde")
    assert (first["rebuild_with"], a["rebuild_with"]) == (["sdh"], ["sdg"])
    assert (first["rebuild_restarts"], a["rebuild_restarts"]) == (1, 0)
    assert first["rebuild_started_s"] == 0.05 and a["rebuild_started_s"] >= 0.1
    assert first["rebuild_progress"] == a["rebuild_progress"] == 1.0
    assert first["rebuild_finished_s"] == a["rebuild_finished_s"]
    alone = ssdlab.run(job, system=write(tmp_path, array + 'fail = [{ member = "sdb", at = "0.05s" }]\n'), seed=2)
    one = alone.internal("md0")["rebuild_finished_s"] - 0.05
    assert a["rebuild_finished_s"] - 0.05 < 1.3 * one, (a["rebuild_finished_s"], one)
    text_out = format_normal(r)
    assert "rebuild onto sdg (replacing sdb)" in text_out and "in one pass with sdh (restarted once" in text_out
    assert "rebuild onto sdh (replacing sde)" in text_out


def test_a_failure_after_a_rebuild_starts_a_rebuild_of_its_own(tmp_path):
    """A member that fails once the first rebuild is done gets a pass of its own; both
    rebuilds are reported, the earlier one under earlier_rebuilds."""
    text = RAID6_TWO_SPARES + """fail = [{ member = "sdb", at = "0s" }, { member = "sde", at = "1.5s" }]
engine_set = { sync_speed_max = "2GB/s" }
"""
    r = ssdlab.run("[r]\nfilename=/dev/md0\nrw=randread\nbs=4k\nioengine=libaio\ndirect=1\nruntime=3\ntime_based\n",
                   system=write(tmp_path, text), seed=2)
    a = r.internal("md0")
    (first,) = a["earlier_rebuilds"]
    assert first["rebuild_finished_s"] < 1.5 <= a["rebuild_started_s"]
    assert (first["rebuild_with"], a["rebuild_with"], first["rebuild_restarts"]) == ([], [], 0)
    assert a["rebuild_progress"] == 1.0


def test_reads_sharing_a_row_do_not_starve_a_write_to_it(tmp_path):
    """64 degraded reads of one row keep it shared; a write to the row must still get in
    (it once waited the whole run: 2 writes in 0.5 s, 506 ms each)."""
    drives = drive_entries("abcd", "intel-x25-e-32", SMALL_SIZE)
    text = drives + ('[[array]]\nname = "md0"\nlevel = 5\nchunk = "16k"\nengine = "streaming"\n'
                     'members = ["sda", "sdb", "sdc", "sdd"]\nfail = [{ member = "sdb", at = 0 }]\n')
    job = ("[global]\nfilename=/dev/md0\nioengine=libaio\ndirect=1\nsize=48k\nruntime=0.5\ntime_based\n"
           "[r]\nrw=randread\nbs=16k\niodepth=64\n[w]\nrw=randwrite\nbs=4k\niodepth=1\n")
    w = next(j for j in ssdlab.run(job, system=write(tmp_path, text), seed=1).to_fio_json()["jobs"] if j["jobname"] == "w")
    assert w["write"]["total_ios"] > 30 and w["write"]["lat_ns"]["max"] < 50e6, w["write"]["lat_ns"]


def test_an_engine_file_from_before_a_key_existed_still_loads(tmp_path):
    """The streaming engine's later keys have defaults; engine_set in a system file can set a
    key the engine file lacks, as --engine-set can."""
    from ssdlab.config.profile import builtin_text, load_engine
    old = "".join(line + "\n" for line in builtin_text("streaming").splitlines()
                  if not line.startswith(("rebuild_depth_beside_host", "host_idle_after")))
    (tmp_path / "old.toml").write_text(old)
    assert load_engine(tmp_path / "old.toml")[0] == load_engine("streaming")[0]
    text = ARRAY.replace('engine = "md"', 'engine = "old.toml"\nengine_set = { rebuild_depth_beside_host = 2 }')
    spec = build(JOB, system=write(tmp_path, text))
    assert spec.core["targets"][0]["device"]["engine"]["rebuild_depth_beside_host"] == 2


def test_stripe_cache_hits_count_only_heads_that_saved_a_read(tmp_path):
    """Two whole rows are written, then the same two rows and a page of the next: the rows
    read nothing either way, so the cached heads there are no hits (8 were counted); only
    the next row's page is read."""
    drives = drive_entries("abcd", "intel-x25-e-32", SMALL_SIZE)
    system = write(tmp_path, drives + '[[array]]\nname = "md0"\nlevel = 5\nchunk = "16k"\n'
                   'members = ["sda", "sdb", "sdc", "sdd"]\n')
    job = ("[global]\nfilename=/dev/md0\nioengine=libaio\ndirect=1\nrw=write\n"
           "[a]\nbs=96k\nsize=96k\n[b]\nstonewall\nbs=100k\nsize=100k\n")
    a = ssdlab.run(job, system=system, seed=1).internal("md0")
    assert (a["stripe_cache_hits"], a["member_bytes_read"]) == (0, 8192)
