"""Sweeps: a grid of runs described in TOML, run on local processes or a Dask cluster,
resumable, written as one Parquet table (``ssdlab sweep GRID.toml``; docs/sweeps.md).

    >>> from ssdlab.sweep import load_grid, run_sweep
    >>> grid = load_grid("grid.toml")          # expanded and checked; errors name file:line
    >>> len(grid.runs)
    >>> summary = run_sweep(grid, out="results.parquet", workers=2)
    >>> import pandas as pd; pd.read_parquet("results.parquet")

The pieces: :mod:`.grid` reads and expands the grid file and builds each run's
:class:`~ssdlab.api.RunSpec` (in the calling process), :mod:`.task` is what a worker runs (a
run spec's JSON in, plain result rows out), :mod:`.runner` hands tasks to an executor, keeps
finished runs in a journal beside the output and writes the Parquet file.
"""

from __future__ import annotations

from typing import Any

__all__ = ["Grid", "GridError", "Run", "SweepInterrupted", "SweepSummary", "journal_path", "load_grid",
           "run_sweep"]

_WHERE = {
    "Grid": "grid", "GridError": "grid", "Run": "grid", "load_grid": "grid",
    "SweepInterrupted": "runner", "SweepSummary": "runner", "journal_path": "runner", "run_sweep": "runner",
}


def __getattr__(name: str) -> Any:
    # Lazy, so that a worker importing ssdlab.sweep.task loads neither rich nor pyarrow.
    if name in _WHERE:
        from importlib import import_module

        return getattr(import_module(f"{__name__}.{_WHERE[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
