"""``ssdlab sweep``: a grid of runs in parallel, one Parquet row per run and job direction."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Optional

import typer
from .common import err, fail, shown


def sweep(
    grid: Annotated[Path, typer.Argument(help="grid TOML: a job file, fixed settings, a grid table of lists (cartesian) and zip tables (lists that advance together)")],
    workers: Annotated[Optional[int], typer.Option(help="local worker processes (default: one per CPU)")] = None,
    scheduler: Annotated[Optional[str], typer.Option(help="run on a Dask cluster: its scheduler's address, e.g. tcp://HOST:8786")] = None,
    out: Annotated[Optional[Path], typer.Option(help="Parquet file of the results (default: the grid file's name with .parquet)")] = None,
    retry_failed: Annotated[bool, typer.Option("--retry-failed", help="run again the runs that failed in an earlier sweep")] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="list the runs (and which the journal has) without running them")] = False,
) -> None:
    """Run a grid of runs in parallel, one Parquet row per run and job direction.

    Finished runs are kept in OUT.runs.jsonl: running the same sweep again runs only what is
    missing (docs/sweeps.md)."""
    import signal

    from ..sweep.grid import GridError, load_grid
    from ..sweep.runner import SweepError, SweepInterrupted, default_out, journal_path, prestart, run_sweep

    if not dry_run:
        prestart(workers, scheduler)  # the workers' server loads ssdlab while the grid is checked
    try:
        g = load_grid(grid)
    except GridError as e:
        fail(str(e))
        return
    target = out if out is not None else default_out(g)
    if dry_run:
        _sweep_plan(g, journal_path(target))
        return

    def _term(signum, frame):  # a batch system's time limit: stop as Ctrl-C does
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, _term)
    try:
        summary = run_sweep(g, target, workers=workers, scheduler=scheduler, retry_failed=retry_failed)
    except SweepInterrupted as e:
        err.print(f"ssdlab sweep: {shown(str(e))}", markup=False)
        raise typer.Exit(130)
    except (SweepError, GridError) as e:
        fail(str(e))
        return
    sys.stdout.write(f"ssdlab sweep: {shown(summary.line())}\n")


def _sweep_plan(g, journal: Path) -> None:
    """The runs of a grid, first their number, then a line each, with what the journal already
    has (written as they are made: a large grid is not held whole)."""
    from ..sweep.runner import read_records

    try:
        done = read_records(journal.read_bytes()) if journal.is_file() else {}
    except OSError as e:
        fail(f"{journal}: {e.strerror or e}")
    keys = [k for k in g.keys if any(a for a in g.axes if k in a.keys)] or g.keys
    sys.stdout.write(f"{g.size:,} runs ({shown(g.shape() or 'no axes')})\n")
    widths = [max(len("run"), len(str(max(g.size - 1, 0))))]
    widths += [max(len(shown(k)), *(len(shown(str(v))) for v in g.values(k))) for k in keys]
    widths.append(len("to run"))

    def line(cells) -> str:
        return "  ".join(shown(str(c)).ljust(w) for c, w in zip(cells, widths)).rstrip() + "\n"

    sys.stdout.write(line(["run", *keys, "status"]))
    n_done = 0
    for r in g.iter_runs():
        rec = done.get(r.key)
        n_done += rec is not None
        status = "to run" if rec is None else ("failed" if rec.get("error") else "done")
        sys.stdout.write(line([r.index, *(r.params[k] for k in keys), status]))
    sys.stdout.write(shown(f"{g.size} runs, {n_done} in {journal}") + "\n")
