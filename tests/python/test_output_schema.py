"""The core's output as Python reads it (``ssdlab.core_output``) against the JSON Schema the
core derives from its Rust types: the same types, the same fields, the same ones required.
A field renamed, added or dropped on either side fails here."""

from __future__ import annotations

import json
import typing

import pytest
from pydantic import ValidationError

import ssdlab
from ssdlab import _core
from ssdlab.core_output import RESULT, TYPES


def _schema() -> dict:
    return json.loads(_core.result_schema())


def _defs(schema: dict) -> dict[str, dict]:
    defs = dict(schema["$defs"])
    defs["SimResult"] = {k: schema[k] for k in ("properties", "required")}
    # Types the core serialises as plain arrays or strings, not objects.
    for name in ("LatencyHistogram", "IoLogRecord", "DeviceKind"):
        defs.pop(name, None)
    return defs


def fields(t: type) -> tuple[set[str], set[str]]:
    """A TypedDict's keys, and those it requires."""
    return set(typing.get_type_hints(t)), set(t.__required_keys__)


def test_every_output_type_has_the_schemas_fields_and_requires_what_it_requires():
    defs = _defs(_schema())
    assert set(defs) == set(TYPES), f"only in the schema: {set(defs) - set(TYPES)}; only in Python: {set(TYPES) - set(defs)}"
    for name, d in defs.items():
        keys, required = fields(TYPES[name])
        assert keys == set(d["properties"]), (name, keys ^ set(d["properties"]))
        assert required == set(d.get("required", [])), (name, required ^ set(d.get("required", [])))


def test_the_check_fails_on_a_renamed_field(monkeypatch):
    """Seen failing: the schema with one field renamed, as a change on the Rust side would."""
    schema = _schema()
    nand = schema["$defs"]["NandReport"]
    nand["properties"]["erase_total"] = nand["properties"].pop("erase_count")
    nand["required"] = ["erase_total" if r == "erase_count" else r for r in nand["required"]]
    monkeypatch.setattr(_core, "result_schema", lambda: json.dumps(schema))
    with pytest.raises(AssertionError, match="NandReport"):
        test_every_output_type_has_the_schemas_fields_and_requires_what_it_requires()


@pytest.fixture(scope="module")
def core_result() -> dict:
    r = ssdlab.run(ssdlab.api.quickstart_job(), profile="samsung-850-pro", seed=3, interval="50ms",
                   overrides={"runtime": "0.2", "time_based": "1"})
    return r.core


def test_a_real_result_validates_and_a_damaged_one_names_the_field(core_result):
    RESULT.validate_python(core_result)
    damaged = json.loads(json.dumps(core_result))
    damaged["devices"][0]["internal"]["nand"]["erase_cnt"] = damaged["devices"][0]["internal"]["nand"].pop("erase_count")
    with pytest.raises(ValidationError) as e:
        RESULT.validate_python(damaged)
    assert "erase_count" in str(e.value) and "erase_cnt" in str(e.value)
