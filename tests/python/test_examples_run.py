"""Every [core] example job file that fio ships must run end to end (shortened)."""

import re
from pathlib import Path

import pytest

import ssdlab
from shared_data import DATA, REASON

EXAMPLES = DATA / "fio-examples" if DATA else Path("/nonexistent")


def core_examples() -> list[str]:
    index = EXAMPLES / "INDEX.md"
    if not index.exists():
        return []
    names = []
    for line in index.read_text().splitlines():
        m = re.match(r"^(\S+\.fio)\s*\[core", line)
        if m:
            names.append(m.group(1))
    return names


# Examples written for a bigger drive than the 256 GB profile, scaled down to fit it.
FIT = {
    "cross-stripe-verify.fio": {"offset_increment": "8g", "io_size": "4g"},  # assumes ~30 x 124 GB
    "enospc-pressure.fio": {"filesize": "64g"},  # two 128 GB files
}

# Variables some examples expect from the environment (the fio docs' own examples).
ENV = {"FIO_BS": "4k", "FIO_RW": "randread", "FIO_IODEPTH": "4"}

# Jobs real fio may never start: exit_what=all cancels them when another job ends. ssdlab
# does not model exit_what (it runs them), so they may go either way here.
MAY_NOT_RUN = {"exitwhat.fio": {"runsnever"}}


needs_examples = pytest.mark.skipif(not EXAMPLES.exists(), reason=REASON)


@needs_examples
def test_index_names_the_core_examples():
    # An empty list would turn the test below into a silent skip.
    assert len(core_examples()) >= 30


@needs_examples
@pytest.mark.parametrize("name", core_examples())
def test_core_example_runs(name):
    # A short runtime keeps every example to a fraction of a simulated second.
    r = ssdlab.run(EXAMPLES / name, profile="samsung-850-pro", env=ENV,
                   overrides={"runtime": "0.02", "ramp_time": "0", **FIT.get(name, {})})
    fio = r.to_fio_json()
    assert fio["jobs"], name
    # End to end: every job (each clone) issues I/O and gets it back, and every job in fio's
    # report moved bytes.
    exempt = MAY_NOT_RUN.get(name, set())
    idle = [(j["name"], j["clone"]) for j in r.core["jobs"]
            if (j["issued"] == 0 or j["completed"] == 0) and j["name"] not in exempt]
    assert not idle, (name, idle)
    empty = [j["jobname"] for j in fio["jobs"]
             if sum(j[d]["io_bytes"] for d in ("read", "write", "trim")) == 0 and j["jobname"] not in exempt]
    assert not empty, (name, empty)
    assert r.core["end_ns"] > 0
