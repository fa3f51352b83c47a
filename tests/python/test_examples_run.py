"""Every [core] example job file that fio ships must run end to end (shortened)."""

import re
from pathlib import Path

import pytest

import ssdlab
from shared_data import DATA

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


@pytest.mark.skipif(not EXAMPLES.exists(), reason="shared/ not beside the repository")
@pytest.mark.parametrize("name", core_examples())
def test_core_example_runs(name):
    # A short runtime keeps every example to a fraction of a simulated second.
    r = ssdlab.run(EXAMPLES / name, profile="samsung-850-pro", env=ENV,
                   overrides={"runtime": "0.02", "ramp_time": "0", **FIT.get(name, {})})
    fio = r.to_fio_json()
    assert fio["jobs"], name
    moved = sum(j[d]["io_bytes"] for j in fio["jobs"] for d in ("read", "write", "trim"))
    started = sum(j["issued"] for j in r.core["jobs"])
    assert started > 0 or moved >= 0
    assert r.core["end_ns"] > 0
