"""``--host-set`` beyond the block queue: ``mem=SIZE`` and the host profile's keys, applied
over the host profile for one run (issue 29's ``--host-set mem=8GiB``)."""

import pytest

import ssdlab
from ssdlab.api import build
from ssdlab.config.profile import ProfileError
from ssdlab.iosched import SchedulerError, split_host_sets

# 96 MiB read twice in 64 KiB calls through the page cache.
TWICE = "[buf]\nrw=read\nbs=64k\nsize=96m\nioengine=psync\ndirect=0\nloops=2\n"
HOST = "server-2008"


def test_keys_are_split_by_what_they_set():
    sched, queue, host = split_host_sets({"iosched.slice_idle": "0", "queue.nomerges": "2", "mem": "4GiB",
                                          "memory.cpus": "4", "hz": "250"})
    assert sched == {"slice_idle": "0"} and queue == {"nomerges": "2"}
    assert host == {"memory.ram": "4GiB", "memory.cpus": "4", "hz": "250"}


def test_mem_sets_the_hosts_ram_and_what_the_page_cache_holds():
    small = ssdlab.run(TWICE, profile="samsung-850-pro", host=HOST,
                       host_set={"mem": "160MiB", "memory.reserved": "128MiB"})
    large = ssdlab.run(TWICE, profile="samsung-850-pro", host=HOST,
                       host_set={"mem": "1GiB", "memory.reserved": "128MiB"})
    assert small.spec.core["host"]["memory"]["ram_bytes"] == 160 << 20
    assert large.spec.core["host"]["memory"]["ram_bytes"] == 1 << 30
    # 32 MiB of cache cannot keep the file for the second pass; 896 MiB can.
    assert small.core["files"]["evicted_pages"] > 0 and large.core["files"]["evicted_pages"] == 0
    assert small.core["files"]["data_bios"] == 2 * large.core["files"]["data_bios"]


def test_host_keys_and_scheduler_settings_together():
    spec = build(TWICE, profile="seagate-barracuda-7200.11-1tb", host=HOST, scheduler="cfq",
                 host_set={"iosched.slice_idle": "0", "memory.cpus": "2"})
    assert spec.core["host"]["memory"]["cpus"] == 2
    assert spec.core["targets"][0]["scheduler"]["slice_idle_ns"] == 0


@pytest.mark.parametrize("sets, error, expect", [
    ({"slice_idle": "0"}, SchedulerError, "--host-set slice_idle=0: expected iosched.TUNABLE=VALUE"),
    ({"memory": "0"}, SchedulerError, "--host-set memory=0: expected"),
    ({"mem": "lots"}, ProfileError, "--host-set memory.ram=lots: key 'memory.ram': expected a size"),
    ({"memory.swap": "1GiB"}, ProfileError, "--host-set memory.swap=1GiB: unknown key"),
    ({"mem": "100MiB"}, ProfileError, "leaves no page cache"),
    # The memory table's rule: the override named, not only the host file's line.
    ({"mem": "0"}, ProfileError, "(line 12), with --host-set memory.ram=0: key 'memory': ram 0 leaves no page cache"),
    # A bound in our words, not pydantic's "Input should be less than or equal to 100".
    ({"memory.dirty_ratio": "200"}, ProfileError, "key 'memory.dirty_ratio': 200: expected at most 100"),
])
def test_a_bad_host_key_is_one_line(sets, error, expect):
    with pytest.raises(error) as e:
        build(TWICE, profile="samsung-850-pro", host=HOST, host_set=sets)
    assert expect in str(e.value) and "\n" not in str(e.value)


def test_a_hosts_bio_cost_is_said_once_to_be_parsed_but_not_modelled(tmp_path):
    # memory.costs.bio reached the core as FileCosts::bio_ns, which nothing read: a host file
    # that sets it is told so once, at its line; the built-in hosts do not set it.
    text = ssdlab.config.profile.builtin_text(HOST)
    assert "\nbio = " not in text
    host = tmp_path / "host.toml"
    host.write_text(text.replace("[memory.costs]\n", "[memory.costs]\nbio = \"5us\"\n", 1))
    line = host.read_text().splitlines().index('bio = "5us"') + 1
    said = [w for w in build(TWICE, profile="samsung-850-pro", host=str(host)).warnings if "bio" in w]
    assert said == [f"{host}:{line}: memory.costs.bio is parsed but not modelled: the file layer charges no CPU "
                    "per bio; ignored"], said
    over = build(TWICE, profile="samsung-850-pro", host=HOST, host_set={"memory.costs.bio": "3us"}).warnings
    assert [w for w in over if "bio" in w] == [f"host '{HOST}', --host-set memory.costs.bio=3us: memory.costs.bio "
                                               "is parsed but not modelled: the file layer charges no CPU per bio; "
                                               "ignored"], over
    assert not [w for w in build(TWICE, profile="samsung-850-pro", host=HOST).warnings if "bio" in w]
