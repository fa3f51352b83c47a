"""Seed 001 (hardware RAID 5 of Samsung 830s behind an Adaptec 6805): the trends the model
reproduces stay reproduced. The others are reported by the experiment, not asserted here
(docs/arrays.md says which, with the numbers)."""

import pytest

from ssdlab.experiments import seed001

REPRODUCED = {
    "random read grows with outstanding I/Os and request size",
    "then flattens at the controller's ceiling",
    "random read does not change with SSD count",
    "random write far below random read",
    "outstanding I/Os do not change random write",
    "random write grows a little with more SSDs",
    "random write falls slowly with larger stripes",
}


@pytest.fixture(scope="module")
def trends():
    return {t.claim: t for t in seed001.trends(seed001.sweep(quick=True))}


@pytest.mark.parametrize("claim", sorted(REPRODUCED))
def test_reproduced_trend_holds(trends, claim):
    assert trends[claim].holds, trends[claim].evidence


def test_every_trend_of_the_paper_is_checked(trends):
    assert len(trends) == 10


def _unwritten_member_reads(result) -> int:
    return sum(m["internal"]["nand"]["unwritten_read_ius"] for m in result.core["devices"][0]["members"])


def test_carried_members_start_from_the_state_the_last_run_left(tmp_path):
    """What one point writes, the next point's reads find on the members (fresh, none)."""
    from ssdlab.api import run
    from ssdlab.system import raid

    system = raid(seed001.PROFILE, level=5, drives=3, chunk="128k", engine=seed001.ENGINE)
    job = "[j]\nrw={}\nbs=128k\nsize=64m\niodepth=16\nioengine=libaio\ndirect=1\n"
    run(job.format("write"), system=system, carry_states=tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["md0.sda.ftl", "md0.sdb.ftl", "md0.sdc.ftl"]
    assert _unwritten_member_reads(run(job.format("read"), system=system)) > 0
    assert _unwritten_member_reads(run(job.format("read"), system=system, carry_states=tmp_path)) == 0


def test_a_carried_sweep_runs_every_point_on_the_same_drives_in_the_papers_order(monkeypatch):
    calls = []

    def measure(rw, **kw):
        calls.append((rw, kw))
        return 1.0

    prepared = []
    monkeypatch.setattr(seed001, "measure", measure)
    monkeypatch.setattr(seed001, "_prepare", lambda *a: prepared.append(a))
    seed001.sweep(quick=True, carry_state=True)
    assert prepared == []  # fresh drives: nothing to prepare
    dirs = {kw["carry_states"] for _, kw in calls}
    assert len(dirs) == 1 and None not in dirs
    # Figure 3 in Iometer's order: each request size through the queue depths.
    writes = [(kw["request_kib"], kw["ncq"]) for rw, kw in calls if rw == "randwrite" and "request_kib" in kw]
    assert writes == sorted(writes)
    # Figures in the paper's order: every read before the first write.
    kinds = [rw for rw, _ in calls]
    assert kinds == sorted(kinds)
    calls.clear()
    seed001.sweep(quick=True, start="sequential")
    assert {(kw["carry_states"], kw["precondition"]) for _, kw in calls} == {(None, "sequential")}
    # Not carried, each point is preconditioned itself: no drives are prepared beforehand.
    assert prepared == []
    calls.clear()
    seed001.sweep(quick=True, carry_state=True, start="sequential")
    assert len(prepared) == 1 and prepared[0][1] == "sequential" and prepared[0][3] is not None
    assert {kw["precondition"] for _, kw in calls} == {None}
