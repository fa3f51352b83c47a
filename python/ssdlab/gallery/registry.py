"""The one registry of reproductions, and running them into :class:`ExperimentResult`s."""

from __future__ import annotations

import time
from typing import Callable, Iterable, Optional

from .core import Context, Experiment, ExperimentResult, Figure, Row, RunFn

REGISTRY: dict[str, Experiment] = {}


def register(name: str, title: str, citation: str, *, quick_note: str = "") -> Callable[[RunFn], RunFn]:
    """Decorator: add ``fn(ctx) -> (rows, figures, notes)`` to the registry under ``name``."""

    def deco(fn: RunFn) -> RunFn:
        if name in REGISTRY:
            raise ValueError(f"experiment {name!r} registered twice")
        REGISTRY[name] = Experiment(name=name, title=title, citation=citation, run=fn, quick_note=quick_note)
        return fn

    return deco


def registered() -> dict[str, Experiment]:
    """Every registered experiment, in registration order. The catalogue lives with the
    experiments and is imported only here, when the gallery runs: the rest of the product
    (``ssdlab run``, ``ssdlab size``) never loads an experiment."""
    from ..experiments import catalog as _  # noqa: F401 - registers them

    return REGISTRY


class UnknownExperiment(ValueError):
    pass


def select(names: Optional[Iterable[str]]) -> list[Experiment]:
    """The experiments named (all when none), in the order given; an unknown name raises
    :class:`UnknownExperiment` with a one-line message listing the names."""
    reg = registered()
    names = list(names or [])
    unknown = [n for n in names if n not in reg]
    if unknown:
        raise UnknownExperiment(f"unknown experiment {', '.join(map(repr, unknown))}; expected one of: "
                                f"{', '.join(reg)}")
    return [reg[n] for n in dict.fromkeys(names)] if names else list(reg.values())


def run_experiment(exp: Experiment, *, quick: bool, seed: int = 0) -> ExperimentResult:
    """Run one experiment. If it raises, the result carries the one-line error and no rows
    (and counts as failed): the gallery still shows every other experiment."""
    t0 = time.perf_counter()
    rows: list[Row] = []
    figures: list[Figure] = []
    notes: list[str] = []
    error = None
    try:
        rows, figures, notes = exp.run(Context(quick=quick, seed=seed))
    except Exception as e:  # noqa: BLE001 - reported on the experiment's row, not as a traceback
        lines = str(e).strip().splitlines()
        error = f"{type(e).__name__}: {lines[0] if lines else ''}"
    rows = [r.model_copy(update={"experiment": exp.name}) for r in rows]
    return ExperimentResult(name=exp.name, title=exp.title, citation=exp.citation, quick=quick, rows=rows,
                            figures=figures, notes=notes, wall_s=time.perf_counter() - t0, error=error)
