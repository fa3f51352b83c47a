"""The 2008 Intel drives (X25-M G1 80 GB, X25-E 32 GB): the loader takes their profiles, every
parameter names its source, and the simulator reproduces Intel's four headline figures
within 15 %: 128 KiB sequential read and write, 4 KiB random read and write, all at QD32,
writes on a fresh drive and reads on a filled one (a never-written LBA is answered without
flash).

The profiles are used by their paths in this checkout, so the test checks these files even
when the installed ``ssdlab`` is another copy."""

import tomllib
from pathlib import Path

import pytest

import ssdlab
from ssdlab.config import load_profile, profile_names
from ssdlab.config.profile import device_core

REPO = Path(__file__).resolve().parents[2]
PROFILES = REPO / "python" / "ssdlab" / "profiles"

# Intel's ratings: MB/s (10^6 B/s) for sequential, IOPS for random.
DATASHEET = {
    "intel-x25-m-80": {"seq_read": 250, "seq_write": 70, "rand_read": 35_000, "rand_write": 3_300},
    "intel-x25-e-32": {"seq_read": 250, "seq_write": 170, "rand_read": 35_000, "rand_write": 3_300},
}
CAPACITY = {"intel-x25-m-80": 156_301_488 * 512, "intel-x25-e-32": 62_533_296 * 512}
TOLERANCE = 0.15


def _path(name: str) -> Path:
    return PROFILES / f"{name}.toml"


def _job(*sections: tuple[str, str, str]) -> str:
    """A fio job file: one stonewalled job per (name, rw, bs), QD32, a short time-based run."""
    text = "[global]\nioengine=libaio\ndirect=1\niodepth=32\nsize=2g\nruntime=0.3\ntime_based\n"
    for name, rw, bs in sections:
        text += f"\n[{name}]\nstonewall\nrw={rw}\nbs={bs}\n"
    return text


@pytest.fixture(scope="module")
def simulated():
    """Per drive: the four figures, from one filled-drive run for the reads and one
    fresh-drive run per write pattern."""
    out = {}
    for name in DATASHEET:
        path = str(_path(name))
        reads = ssdlab.run(_job(("seq_read", "read", "128k"), ("rand_read", "randread", "4k")),
                           profile=path, precondition="sequential", seed=1).to_fio_json()["jobs"]
        got = {j["jobname"]: j["read"] for j in reads}
        figures = {"seq_read": got["seq_read"]["bw_bytes"] / 1e6, "rand_read": got["rand_read"]["iops"]}
        for job, rw, bs in (("seq_write", "write", "128k"), ("rand_write", "randwrite", "4k")):
            w = ssdlab.run(_job((job, rw, bs)), profile=path, seed=1).to_fio_json()["jobs"][0]["write"]
            figures[job] = w["bw_bytes"] / 1e6 if job == "seq_write" else w["iops"]
        out[name] = figures
    return out


@pytest.mark.parametrize("name,figure", [(n, f) for n in DATASHEET for f in DATASHEET[n]])
def test_datasheet_figure_is_reproduced(simulated, name, figure):
    want = DATASHEET[name][figure]
    got = simulated[name][figure]
    assert abs(got / want - 1) <= TOLERANCE, f"{name} {figure}: simulated {got:.1f}, datasheet {want}"


def _leaves(table, prefix=""):
    for k, v in table.items():
        if isinstance(v, dict) and "value" in v:
            yield prefix + k, v
        elif isinstance(v, dict):
            yield from _leaves(v, prefix + k + ".")
        else:
            yield prefix + k, v


@pytest.mark.parametrize("name", sorted(DATASHEET))
def test_profile_loads_with_a_source_for_every_parameter(name):
    path = _path(name)
    prof, sources = load_profile(path)
    assert prof.name == name and prof.kind == "ssd"
    assert prof.capacity == CAPACITY[name]
    assert prof.queue_depth == 32  # SATA NCQ
    assert prof.raw_bytes > prof.capacity
    # The core accepts the device it describes.
    _, _, core, _ = device_core(path)
    assert core["capacity_bytes"] == CAPACITY[name]
    # Every parameter is {value, source} with a source that is not a local path.
    for key, v in _leaves(tomllib.loads(path.read_text())):
        if key in {"name", "description", "kind", "interface.kind"}:
            continue
        assert isinstance(v, dict) and v.get("source", "").strip(), f"{name}: {key} has no source"
        assert "/work/" not in v["source"], f"{name}: {key} cites a local path"


def test_builtin_names_include_the_2008_drives():
    if not Path(ssdlab.__file__).resolve().is_relative_to(REPO):
        pytest.skip(f"ssdlab is imported from {Path(ssdlab.__file__).parent}, not this checkout")
    assert set(DATASHEET) <= set(profile_names())
    for name in DATASHEET:
        assert load_profile(name)[0].name == name
