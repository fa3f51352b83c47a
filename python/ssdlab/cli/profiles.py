"""``ssdlab profiles`` and ``ssdlab profiles show``: the built-in profiles."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from ..config import ProfileError, engine_names, host_names, load_engine, load_host, load_profile, profile_names
from ..config.profile import builtin_text
from .common import console, fail

profiles_app = typer.Typer(help="Built-in device profiles.", invoke_without_command=True)


@profiles_app.callback()
def profiles(ctx: typer.Context) -> None:
    """List the built-in profiles: drives (--profile), hosts (--host) and RAID engines (--engine)."""
    if ctx.invoked_subcommand is not None:
        return
    rows = []
    for name in profile_names():
        p, _ = load_profile(name)
        rows.append((name, p.kind, p.description, f"{p.capacity / 1e9:.0f} GB"))
    for name in host_names():
        h, _ = load_host(name)
        rows.append((name, "host", h.description, "-"))
    for name in engine_names():
        e, _ = load_engine(name)
        rows.append((name, "engine", f"{e.description} ({e.kind})", "-"))
    # Names are what people copy into --profile: never cut or folded, however narrow the
    # output (80 columns when piped); the description wraps instead.
    table = Table(box=None)
    table.add_column("name", no_wrap=True, min_width=max(len(r[0]) for r in rows))
    table.add_column("kind", no_wrap=True)
    table.add_column("description")
    table.add_column("capacity", no_wrap=True)
    for r in rows:
        table.add_row(*r)
    console().print(table)



@profiles_app.command("show")
def profiles_show(name: Annotated[str, typer.Argument(help="profile name (a drive, host or engine)")]) -> None:
    """Print a profile as TOML, with the source of every value."""
    try:
        text = builtin_text(name)
    except ProfileError as e:
        fail(str(e).splitlines()[0])
    if Path(name).suffix == ".toml" or Path(name).exists():
        _check_profile_file(name)
    sys.stdout.write(text)


def _check_profile_file(path: str) -> None:
    """A file given by path is shown only if it is a drive, host or engine profile."""
    errors = []
    for load in (load_profile, load_host, load_engine):
        try:
            load(path)
            return
        except ProfileError as e:
            errors.append(str(e).splitlines()[0].removeprefix(f"{path}: "))
    fail(f"{path}: not a drive, host or engine profile; as a drive profile: {errors[0]}")
