"""Seed 000 on the simulator (quick version of the experiment): schedulers help a disk and
hurt a 2008 SSD, for the reasons the model gives."""

import pytest

from ssdlab.experiments import seed000


@pytest.fixture(scope="module")
def data():
    return seed000.sweep(quick=True)


def test_the_blogs_trends(data):
    by_claim = {t.claim: t for t in seed000.trends(data)}
    for claim, t in by_claim.items():
        if "alike under cfq" in claim:
            continue  # not reproduced: see docs/hdd-and-schedulers.md
        assert t.holds, f"{claim}: {t.evidence}"


def test_cfq_serialises_the_ssd_once_it_decides_the_device_does_not_queue(data):
    p = data["processes"].set_index(["drive", "scheduler", "processes"]).iops
    ssd = seed000.SSD
    # One process: every scheduler sees the same single stream.
    assert p[(ssd, "cfq", 1)] == pytest.approx(p[(ssd, "noop", 1)], rel=0.02)
    # 128 processes under CFQ: about the one-process rate (one request in the device at a time).
    assert p[(ssd, "cfq", 128)] < 1.2 * p[(ssd, "cfq", 1)]
    assert p[(ssd, "noop", 128)] > 5 * p[(ssd, "cfq", 128)]
