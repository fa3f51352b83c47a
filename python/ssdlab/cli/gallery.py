"""``ssdlab reproduce`` (the reproduction gallery) and ``ssdlab report`` (one run's HTML page)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from .common import check_output, check_seed, deliver, err, fail, interruptible, write_whole


@interruptible
def reproduce(
    names: Annotated[Optional[list[str]], typer.Argument(help="experiments to run (default: all; --list shows them)", show_default=False)] = None,
    quick: Annotated[bool, typer.Option("--quick", help="shortened runs (what CI runs); rows they cannot show are not judged")] = False,
    out: Annotated[Path, typer.Option("--out", help="directory for the gallery page (DIR/index.html) and its rows for scripts (DIR/rows.json)")] = Path("gallery"),
    list_: Annotated[bool, typer.Option("--list", help="list the experiments and exit")] = False,
    seed: Annotated[int, typer.Option(help="random seed; same seed, same result")] = 0,
) -> None:
    """Run the published-measurement reproductions and write an HTML gallery.

    Prints published vs simulated with each row's tolerance and status. Exit status 1 if any
    row fails its tolerance."""
    check_seed(seed)
    from .. import gallery

    try:
        chosen = gallery.select(names)
    except gallery.UnknownExperiment as e:
        fail(str(e))
        return
    if list_:
        for exp in chosen:
            sys.stdout.write(f"{exp.name}\t{exp.title}\n\tquick: {exp.quick_note or 'as full'}\n")
        return
    if out.exists() and not out.is_dir():
        fail(f"--out {out}: not a directory")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        fail(f"--out {out}: {e.strerror or e}")
    check_output(out / "index.html", "--out")
    results = []
    show = sys.stderr.isatty()
    for i, exp in enumerate(chosen, 1):
        label = f"[{i}/{len(chosen)}] {exp.name}{' (quick)' if quick else ''}"
        if show:
            with err.status(label, spinner="dots"):
                res = gallery.run_experiment(exp, quick=quick, seed=seed)
        else:
            res = gallery.run_experiment(exp, quick=quick, seed=seed)
        results.append(res)
        counts = ", ".join(f"{v} {k}" for k, v in res.counts().items() if v)
        tail = f" (raised: {res.error})" if res.error else ""
        err.print(f"{label}: {res.wall_s:.0f} s, {counts or 'no rows'}{tail}", markup=False)
    sys.stdout.write(gallery.text_table(results))
    sys.stdout.write(gallery.summary(results) + "\n")
    try:
        write_whole(out / "index.html", gallery.page(results, quick=quick))
        write_whole(out / "rows.json", gallery.rows_json(results))
    except OSError as e:
        fail(f"--out {out}: {e.strerror or e}")
    sys.stdout.write(f"gallery: {out / 'index.html'}\n")
    if any(r.failed for r in results):
        raise typer.Exit(1)


def report(
    result: Annotated[Path, typer.Argument(help="JSON written by ssdlab run --output-format json, of fio jobs or a file workload (with --interval for the time series)")],
    output: Annotated[Path, typer.Option("--output", "-o", help="HTML file to write")] = Path("report.html"),
) -> None:
    """One run's JSON result as a self-contained HTML page.

    A block-level run: fio summary, latency percentiles, iostat, each device's insides and,
    when the run was sampled, their course over time. A file workload run: each thread's
    operations, page cache and journal, CPUs, a server's network and what bounds it and,
    when sampled, each interval's cache hits, program times and CPUs."""
    from ..htmlreport import ReportInputError, page

    check_output(output, "--output")
    try:
        text = page(result)
    except ReportInputError as e:
        fail(str(e))
        return
    deliver(text, output)
    sys.stdout.write(f"report: {output}\n")
