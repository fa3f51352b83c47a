"""I/O schedulers from Python: sysfs names and units, the kernel's defaults (the same on both
sides), errors that name the setting, and what each scheduler does to a disk."""

import json

import pytest

import ssdlab
from ssdlab import _core
from ssdlab.api import build
from ssdlab.iosched import SCHEDULERS, SchedulerError, queue_core, scheduler_core
from ssdlab.system import SystemFileError, load_system

SCHEMA = json.loads(_core.spec_schema())
VARIANTS = {v["properties"]["name"]["const"]: v for v in SCHEMA["$defs"]["SchedulerConfig"]["oneOf"]}
DISK = "seagate-barracuda-7200.11-1tb"


@pytest.mark.parametrize("name", list(SCHEDULERS))
def test_defaults_are_the_cores(name):
    variant = VARIANTS[name]
    core = scheduler_core(name)
    assert set(core) == set(variant["properties"]), "every tunable sent, none unknown"
    for key, value in core.items():
        if key != "name":
            assert value == variant["properties"][key]["default"], key
    q = SCHEMA["$defs"]["QueueLimits"]["properties"]
    assert queue_core() == {k: q[k].get("default") for k in q}


def test_bfq_takes_low_latency_0_which_is_what_it_models():
    assert "low_latency" not in scheduler_core("bfq", {"low_latency": "0"})


def test_sysfs_units_become_the_cores():
    core = scheduler_core("cfq", {"slice_idle": 0, "back_seek_max": "32768", "quantum": 8})
    assert (core["slice_idle_ns"], core["back_seek_max_kb"], core["quantum"]) == (0, 32768, 8)
    assert scheduler_core("deadline", {"front_merges": 0})["front_merges"] is False
    assert queue_core({"nomerges": "2"})["nomerges"] == 2


@pytest.mark.parametrize("name,sets,expect", [
    ("cfq", {"slice_idel": 0}, "iosched.slice_idel: cfq has no such tunable (it has: quantum,"),
    ("noop", {"fifo_batch": 1}, "noop has no such tunable (it has: none)"),
    ("deadline", {"read_expire": "fast"}, "iosched.read_expire='fast': expected milliseconds"),
    ("deadline", {"front_merges": 2}, "expected 0 or 1"),
    ("bfq", {"low_latency": 1}, "iosched.low_latency=1: bfq's weight raising of interactive and soft"
                                " real-time processes is not modelled; ssdlab runs bfq as with low_latency=0"),
    ("kyber", {"read_lat_nsec": "2ms"}, "iosched.read_lat_nsec='2ms': expected nanoseconds"),
])
def test_bad_tunables_are_named(name, sets, expect):
    with pytest.raises(SchedulerError, match=None) as e:
        scheduler_core(name, sets)
    assert expect in str(e.value)


def test_bad_scheduler_and_queue_settings_fail_at_build():
    with pytest.raises(SchedulerError, match="scheduler 'bfq2': expected one of none, noop"):
        build("[j]\nrw=read\nsize=1m\n", profile=DISK, scheduler="bfq2")
    with pytest.raises(SchedulerError, match=r"queue.nomerges='3': expected 0 to 2"):
        build("[j]\nrw=read\nsize=1m\n", profile=DISK, host_set={"queue.nomerges": "3"})
    with pytest.raises(SchedulerError, match="expected iosched.TUNABLE=VALUE"):
        build("[j]\nrw=read\nsize=1m\n", profile=DISK, host_set={"slice_idle": "0"})


def test_a_system_file_sets_a_drives_scheduler_and_names_the_line_of_a_mistake(tmp_path):
    p = tmp_path / "sys.toml"
    p.write_text(f'[[drive]]\nname = "sda"\nprofile = "{DISK}"\nscheduler = "cfq"\niosched = {{ slice_idle = 0 }}\n')
    spec = build("[j]\nrw=read\nsize=1m\n", system=p)
    assert spec.core["targets"][0]["scheduler"]["slice_idle_ns"] == 0
    # The command line wins: another scheduler drops the file's tunables.
    spec = build("[j]\nrw=read\nsize=1m\n", system=p, scheduler="deadline")
    assert spec.core["targets"][0]["scheduler"]["name"] == "deadline"
    p.write_text(f'[[drive]]\nname = "sda"\nprofile = "{DISK}"\nscheduler = "cfq"\niosched = {{ slice_ide = 0 }}\n')
    with pytest.raises(SystemFileError) as e:
        load_system(p)
    assert "sys.toml:5" in str(e.value) and "slice_ide" in str(e.value)
    p.write_text(f'[[drive]]\nname = "sda"\nprofile = "{DISK}"\nscheduler = "as"\n')
    with pytest.raises(SystemFileError) as e:
        load_system(p)
    assert "sys.toml:4" in str(e.value) and "expected one of none, noop" in str(e.value)


def _readers(n: int, ios: int = 64) -> str:
    return (f"[r]\nioengine=libaio\ndirect=1\nrw=randread\nbs=4k\niodepth=1\nnumjobs={n}\nsize=100%\n"
            f"io_size={ios * 4}k\ngroup_reporting\n")


def test_merges_show_in_iostat_and_disk_util():
    # A sequential writer 32 deep on a disk without NCQ: waiting bios merge under noop.
    job = "[w]\nioengine=libaio\ndirect=1\nrw=write\nbs=4k\niodepth=32\nsize=64m\nio_size=8m\n"
    sets = {"queue_depth": "1"}
    noop = ssdlab.run(job, profile=DISK, profile_set=sets, scheduler="noop")
    none = ssdlab.run(job, profile=DISK, profile_set=sets, scheduler="none")
    u = noop.to_fio_json()["disk_util"][0]
    assert u["write_merges"] > 1000 and u["write_ios"] + u["write_merges"] == 2048
    assert noop.iostat("sda")["wrqm/s"] > 0 and noop.iostat("sda")["%wrqm"] > 50
    assert none.to_fio_json()["disk_util"][0]["write_merges"] == 0


def test_fios_ioscheduler_option_switches_the_jobs_device(tmp_path):
    job = "[r]\nioengine=libaio\ndirect=1\nrw=randread\nbs=4k\niodepth=1\nnumjobs=2\nsize=100%\nio_size=8k\nioscheduler=cfq\n"
    spec = build(job, profile=DISK)
    assert spec.core["targets"][0]["scheduler"]["name"] == "cfq"
    assert build(job, profile=DISK, scheduler="noop").core["targets"][0]["scheduler"]["name"] == "noop"
    from ssdlab.fio import FioJobError
    with pytest.raises(FioJobError, match=r"<job text>:6: option 'ioscheduler': 'cfq': another job sets this device's"):
        build("[a]\nioscheduler=noop\nrw=read\nsize=1m\n[b]\nioscheduler=cfq\nrw=read\nsize=1m\n", profile=DISK)
    from ssdlab.system import raid
    with pytest.raises(ValueError, match="md array, which has no I/O scheduler"):
        build("[a]\nioscheduler=noop\nrw=read\nsize=1m\n", system=raid(DISK, 0, 2))


def test_iodepth_batch_submit_plugs_its_batches_so_they_merge_even_under_none():
    # A sequential writer 32 deep, submitting 8 at a time (io_submit of 8 iocbs under a plug):
    # the plug merges contiguous bios whatever the scheduler; one at a time nothing merges
    # under `none`.
    job = "[w]\nioengine=libaio\ndirect=1\nrw=write\nbs=4k\niodepth=32\nsize=64m\nio_size=8m\n"
    batched = ssdlab.run(job + "iodepth_batch_submit=8\n", profile=DISK)
    single = ssdlab.run(job, profile=DISK)
    u = batched.to_fio_json()["disk_util"][0]
    assert u["write_ios"] + u["write_merges"] == 2048 and u["write_merges"] >= 2048 * 7 // 8 - 32
    assert single.to_fio_json()["disk_util"][0]["write_merges"] == 0
    assert build(job + "iodepth_batch=0\n", profile=DISK).core["jobs"][0]["iodepth_batch_submit"] == 0


def test_kyber_throttles_writes_when_reads_miss_their_target():
    # A QD1 reader behind 32 queued 64 KiB writes on a SATA SSD waits ~3.8 ms in the device,
    # over kyber's 2 ms read target: congestion. The writes' own latency is well under their
    # 10 ms target, so kyber cuts their tokens (halving per judgement) and the reader waits
    # behind fewer. With a read target the reads meet, nothing is throttled.
    job = ("[global]\nioengine=libaio\ndirect=1\nruntime=10s\ntime_based=1\n"
           "[reader]\nrw=randread\nbs=4k\niodepth=1\nsize=20%\n"
           "[writer]\nrw=randwrite\nbs=64k\niodepth=32\nsize=20%\noffset=40%\n")
    runs = {
        name: ssdlab.run(job, profile="samsung-850-pro", scheduler=sched, host_set=sets).to_fio_json()["jobs"]
        for name, sched, sets in [("none", "none", None), ("kyber", "kyber", None),
                                  ("lax", "kyber", {"iosched.read_lat_nsec": "8000000"})]
    }
    read = {k: v[0]["read"]["clat_ns"]["mean"] for k, v in runs.items()}
    write = {k: v[1]["write"]["bw_bytes"] for k, v in runs.items()}
    assert read["kyber"] < 0.75 * read["none"], read
    assert write["kyber"] > 0.98 * write["none"], write
    assert read["lax"] == pytest.approx(read["none"], rel=0.01), "no congestion: no throttling"
