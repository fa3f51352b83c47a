"""Seed 000's items 3 and 5 run the blog's SSD used (``seed000_ssd_state``), its disk as it is."""

from __future__ import annotations

import pytest

from ssdlab.experiments import seed000_aging, seed000_mailqueue, seed000_mft, seed000_mkfs
from ssdlab.experiments.seed000_ssd_state import SSD_STATE
from ssdlab.system import parse_precondition


class Built(Exception):
    """Raised by the stand-in for ``build``: what the experiment asked for, nothing run."""


def preconditions(module, monkeypatch, call) -> dict[str, object]:
    """The ``precondition`` an experiment's ``run`` gives ``build`` for each drive."""
    seen: dict[str, object] = {}

    def build(*args, **kwargs):
        raise Built(kwargs.get("precondition"))

    monkeypatch.setattr(module, "build", build)
    for drive in module.DRIVES:
        with pytest.raises(Built) as e:
            call(drive)
        seen[drive] = e.value.args[0]
    return seen


def test_the_state_is_a_precondition_the_core_takes() -> None:
    assert parse_precondition(SSD_STATE) == {"kind": "random", "passes": 2.0}


@pytest.mark.parametrize("module, call", [
    (seed000_mailqueue, lambda d: seed000_mailqueue.run(d, scale=1000)),
    (seed000_aging, lambda d: seed000_aging.run(d, aged=False)),
    (seed000_mkfs, lambda d: seed000_mkfs.run(d)),
])
def test_file_experiments_run_the_blogs_ssd_used(module, call, monkeypatch) -> None:
    assert preconditions(module, monkeypatch, call) == {"ssd": SSD_STATE, "hdd": None}


def test_mft_runs_the_blogs_ssd_used_and_with_and_without_its_layer() -> None:
    for layer in (False, True):
        ssd = seed000_mft.system("ssd", layer)
        assert [d.precondition for d in ssd.drives] == [SSD_STATE]
        assert [d.precondition for d in seed000_mft.system("hdd", layer).drives] == ["sequential"]
