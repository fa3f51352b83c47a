"""Tasks for tests of ``ssdlab.sweep`` that need a worker to misbehave. They live in a module
of their own so that spawned workers can import them (the test's sys.path goes with them)."""

import json
import os

from ssdlab.sweep.task import run_task


def die_on_seed_2(key: str, spec_json: str) -> dict:
    """The real task, except that the worker process dies on the run with seed 2."""
    if json.loads(spec_json)["core"]["seed"] == 2:
        os._exit(3)
    return run_task(key, spec_json)
