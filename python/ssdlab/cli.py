"""The ``ssdlab`` command line."""

from __future__ import annotations

import json
import sys
from enum import Enum
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console
from rich.table import Table

from . import api
from .config import ProfileError, load_profile, profile_names
from .config.profile import profile_text
from .fio import FioJobError
from .units import UnitError

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, no_args_is_help=False,
                  help="Simulate SSDs behind a Linux block layer, driven by fio job files.")
profiles_app = typer.Typer(help="Built-in device profiles.", invoke_without_command=True)
app.add_typer(profiles_app, name="profiles")

_err = Console(stderr=True, highlight=False, soft_wrap=True)


class OutputFormat(str, Enum):
    normal = "normal"
    json = "json"


def _fail(message: str) -> None:
    """Bad input: one line on stderr, exit status 2, no traceback."""
    _err.print(f"ssdlab: error: {message}", markup=False)
    raise typer.Exit(2)


def _overrides(pairs: list[str]) -> dict[str, str]:
    out = {}
    for p in pairs:
        key, eq, value = p.partition("=")
        if not eq or not key.strip():
            _fail(f"--set {p!r}: expected OPTION=VALUE")
        out[key.strip()] = value.strip()
    return out


@app.command()
def run(
    job: Annotated[Optional[Path], typer.Argument(help="fio job file (default: the built-in quickstart job)")] = None,
    profile: Annotated[str, typer.Option(help="device profile name or TOML file")] = api.DEFAULT_PROFILE,
    host: Annotated[Optional[str], typer.Option(help="host profile (default: the profile's calibration host)")] = None,
    seed: Annotated[int, typer.Option(help="random seed; same seed, same result")] = 0,
    output_format: Annotated[OutputFormat, typer.Option("--output-format", help="normal or json")] = OutputFormat.normal,
    interval: Annotated[Optional[str], typer.Option(help="time-series interval, e.g. 1s or 500ms")] = None,
    precondition: Annotated[Optional[str], typer.Option(help="none | sequential | random[:PASSES]")] = None,
    set_: Annotated[list[str], typer.Option("--set", help="override a job option in every job, e.g. runtime=10")] = [],
    output: Annotated[Optional[Path], typer.Option(help="write the report to this file")] = None,
) -> None:
    """Run a fio job file on a simulated device and report as fio and iostat would."""
    if job is not None and not job.is_file():
        _fail(f"{job}: no such job file")
    try:
        result = api.run(job, profile=profile, host=host, seed=seed, overrides=_overrides(set_),
                         interval=interval, precondition=precondition)
    except (FioJobError, ProfileError, UnitError, api.SimulationError, ValueError) as e:
        _fail(str(e).splitlines()[0])
        return
    if output_format == OutputFormat.json:
        text = json.dumps(result.to_fio_json(), indent=2) + "\n"
    else:
        from .report import format_normal

        text = format_normal(result)
        for w in result.warnings:
            _err.print(f"ssdlab: warning: {w}", markup=False)
    if output:
        output.write_text(text)
    else:
        sys.stdout.write(text)


@profiles_app.callback()
def profiles(ctx: typer.Context) -> None:
    """List the built-in device profiles."""
    if ctx.invoked_subcommand is not None:
        return
    table = Table("name", "description", "capacity", box=None)
    for name in profile_names():
        p, _ = load_profile(name)
        table.add_row(name, p.description, f"{p.capacity / 1e9:.0f} GB")
    Console().print(table)


@profiles_app.command("show")
def profiles_show(name: Annotated[str, typer.Argument(help="profile name")]) -> None:
    """Print a profile as TOML, with the source of every value."""
    try:
        sys.stdout.write(profile_text(name))
    except ProfileError as e:
        _fail(str(e))


def main() -> None:
    app()
