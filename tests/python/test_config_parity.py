"""One source of truth for configuration: the core's types define its input, and its JSON
Schema (generated from them) is what Python is checked against. A field added on one side
only fails here."""

import json
from typing import Any

import jsonschema
import pytest
from pydantic import BaseModel

from ssdlab import _core
from ssdlab.api import build
from ssdlab.config import host_names, load_host, load_profile, profile_names
from ssdlab.workload import BlockSizeDist, Distribution, JobSpec, Zone

SCHEMA = json.loads(_core.spec_schema())
DEFS = SCHEMA["$defs"]


def _resolve(node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        node = DEFS[node["$ref"].rsplit("/", 1)[1]]
    return node


def _objects(node: dict[str, Any]) -> list[dict[str, Any]]:
    """The object schemas a value may take (through refs, anyOf/oneOf and nulls)."""
    node = _resolve(node)
    if "properties" in node:
        return [node]
    out = []
    for k in ("anyOf", "oneOf"):
        for alt in node.get(k, []):
            out += _objects(alt)
    return out


def drift(sent: Any, node: dict[str, Any], path: str = "") -> list[str]:
    """Keys sent that the core does not know, and keys the core knows that were not sent
    (Python must state every field, so that no default lives on one side only)."""
    if isinstance(sent, dict):
        candidates = _objects(node)
        if not candidates:
            return []
        if "kind" in sent:  # a tagged union: the variant whose tag matches
            candidates = [c for c in candidates if c["properties"].get("kind", {}).get("const") in (None, sent["kind"])]
        best = min((_object_drift(sent, c, path) for c in candidates), key=len)
        return best
    if isinstance(sent, list):
        node = _resolve(node)
        items = node.get("items")
        out = []
        if isinstance(items, dict):
            for i, x in enumerate(sent):
                out += drift(x, items, f"{path}[{i}]")
        return out
    return []


def _object_drift(sent: dict[str, Any], obj: dict[str, Any], path: str) -> list[str]:
    props = obj["properties"]
    out = [f"{path}.{k}: sent but unknown to the core" for k in sent if k not in props]
    out += [f"{path}.{k}: known to the core but not sent" for k in props if k not in sent]
    for k, v in sent.items():
        if k in props:
            out += drift(v, props[k], f"{path}.{k}")
    return out


def test_the_drift_check_can_fail():
    job = JobSpec(name="j", block_sizes=(BlockSizeDist(split=[(4096, 100.0)]),) * 3,
                  block_align=(4096,) * 3, region_size=1 << 20, io_limit=1 << 20).model_dump(mode="json")
    assert drift(job, DEFS["JobSpec"]) == []
    extra = dict(job, surprise=1)
    assert drift(extra, DEFS["JobSpec"]) == [".surprise: sent but unknown to the core"]
    fewer = dict(job)
    del fewer["thinktime_blocks"]
    assert drift(fewer, DEFS["JobSpec"]) == [".thinktime_blocks: known to the core but not sent"]


@pytest.mark.parametrize("model, name", [(JobSpec, "JobSpec"), (BlockSizeDist, "BlockSizeDist"),
                                         (Zone, "Zone"), (Distribution, "Distribution")])
def test_job_models_have_the_cores_fields_and_defaults(model: type[BaseModel], name: str):
    props = DEFS[name]["properties"]
    assert set(model.model_fields) == set(props), f"{name}: fields differ"
    required = set(DEFS[name].get("required", []))
    for field, info in model.model_fields.items():
        if "default" in props[field] and not info.is_required():
            default = info.get_default(call_default_factory=True)
            if isinstance(default, BaseModel):
                default = default.model_dump(mode="json")
            if isinstance(default, tuple):
                default = list(default)
            assert default == props[field]["default"], f"{name}.{field}: default {default!r} vs core {props[field]['default']!r}"
        if info.is_required():
            assert field in required, f"{name}.{field} is required in Python only"


@pytest.mark.parametrize("name", profile_names())
def test_every_profile_describes_its_device_as_the_core_reads_it(name):
    prof, _ = load_profile(name)
    core = prof.to_core(prof.simulation_scale)
    jsonschema.validate(core, {"$defs": DEFS, **DEFS["DeviceConfig"]})
    assert drift(core, DEFS["DeviceConfig"]) == []
    assert _core.check_device(json.dumps(core)) is None


@pytest.mark.parametrize("name", host_names())
def test_every_host_profile_is_a_core_host(name):
    host, _ = load_host(name)
    core = host.to_core()
    jsonschema.validate(core, {"$defs": DEFS, **DEFS["HostConfig"]})
    assert drift(core, DEFS["HostConfig"]) == []


def test_a_built_run_is_what_the_core_reads():
    job = ("[global]\ndirect=1\nbs=4k\nsize=16m\nnumber_ios=10\n[a]\nrw=randrw\nrandom_distribution=zoned:60/10:40/90\n"
           "[b]\nrw=write\nbssplit=4k/50:64k/50\nrate=10m\nthinktime=5\n")
    spec = build(job, profile="samsung-970-evo-plus-1tb", scale=0.05, precondition="random:0.1", interval="1ms")
    jsonschema.validate(spec.core, SCHEMA)
    assert drift(spec.core, SCHEMA) == []
