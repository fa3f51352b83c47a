"""The ``ssdlab`` command line: :data:`app` and :func:`main` (the ``ssdlab`` entry point and
``python -m ssdlab``).

One module per group of commands, registered here in the order ``ssdlab --help`` lists them:
:mod:`.runs` (run, measure, compare, fit, replay), :mod:`.sweep`, :mod:`.server`, :mod:`.site`, :mod:`.sizing` (size,
endurance), :mod:`.rebuild`, :mod:`.gallery` (reproduce, report) and :mod:`.profiles`; what
they share (one-line errors, Ctrl-C, writing a report) is in :mod:`.common`."""

from __future__ import annotations

import inspect
import sys
from typing import Annotated

import typer

from . import gallery, rebuild, runs, server, site, sizing, sweep
from .profiles import profiles_app

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, no_args_is_help=False,
                  help="Simulate SSDs, hard disks and arrays behind a Linux block layer, driven by fio job files or block traces.")
app.add_typer(profiles_app, name="profiles")



def help_text(doc: str | None) -> str:
    """A command's docstring as its help: each paragraph on one line. Typer's rich help keeps
    a docstring's line breaks and then wraps again at the terminal's width, which leaves a
    short line wherever the source wrapped."""
    paragraphs = inspect.cleandoc(doc or "").split("\n\n")
    return "\n\n".join(" ".join(line.strip() for line in p.splitlines()) for p in paragraphs)


for _command in (runs.run, runs.measure, runs.compare, runs.fit, runs.replay, sweep.sweep, server.server, site.site, sizing.size,
                 sizing.endurance, rebuild.rebuild, gallery.reproduce, gallery.report):
    app.command(help=help_text(_command.__doc__))(_command)


def _show_version(value: bool) -> None:
    if value:
        from .. import __version__

        sys.stdout.write(f"ssdlab {__version__}\n")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[bool, typer.Option("--version", callback=_show_version, is_eager=True,
                                          help="print the version and exit")] = False,
) -> None:
    pass


def main() -> None:
    from .common import StdoutError, guard_stdout, stdout_failed, terminate_as_interrupt

    guard_stdout()
    terminate_as_interrupt()
    try:
        code = _run_app()
        sys.stdout.flush()  # now, not at exit, where a failure could only be ignored
    except StdoutError as e:
        stdout_failed(e)
    raise SystemExit(code)


def _run_app() -> int:
    """Run the command; its exit status. A mistake in the arguments (an unknown option, a
    value not among an option's choices, a missing argument) is one line, as every other
    error is, with where to find the command's help."""
    from .common import err, usage_exceptions

    click_error, no_args, abort = usage_exceptions()
    taken = _option_taken_as_value(sys.argv[1:])
    if taken is not None:
        err.print(f"ssdlab: error: {taken}", markup=False)
        return 2
    try:
        code = app(standalone_mode=False)
    except no_args as e:
        sys.stdout.write(e.ctx.get_help() + "\n")
        return 0
    except click_error as e:
        message = " ".join(e.format_message().replace("Value error, ", "").split()).rstrip(".")
        ctx = getattr(e, "ctx", None)
        where = f"; see '{ctx.command_path} --help'" if ctx is not None else ""
        err.print(f"ssdlab: error: {message}{where}", markup=False)
        return e.exit_code
    except abort:
        err.print("ssdlab: interrupted", markup=False)
        return 130
    return code if isinstance(code, int) else 0


def _option_taken_as_value(argv: list[str]) -> str | None:
    """An option given without its value and followed by another option (``--host --scale
    0.01``): the parser takes the second option for the first one's value, and the error fell
    elsewhere ("0.01: no such job file"). Said here, as the parser says a value missing at the
    end ("Option '--host' requires an argument"); None when there is none."""
    try:
        import typer.main

        cmd = typer.main.get_command(app)
        path = []
        args = list(argv)
        while hasattr(cmd, "commands"):
            i = next((k for k, a in enumerate(args) if not a.startswith("-")), None)
            if i is None or args[i] not in cmd.commands:
                return None
            path.append(args[i])
            cmd, args = cmd.commands[args[i]], args[i + 1:]
        options = [p for p in cmd.params if getattr(p, "opts", None) and p.param_type_name == "option"]
        names = {o for p in options for o in (*p.opts, *p.secondary_opts)} | {"--help"}
        valued = {o for p in options if not p.is_flag and p.nargs == 1 for o in p.opts}
        k = 0
        while k < len(args) - 1:
            if args[k] == "--":
                return None
            if args[k] in valued:
                if args[k + 1] in names:
                    try:
                        from typer._click.utils import _detect_program_name
                        prog = _detect_program_name()
                    except ImportError:  # pragma: no cover - Typer before it carried click
                        prog = "ssdlab"
                    return (f"Option '{args[k]}' requires an argument, got the option '{args[k + 1]}'; "
                            f"see '{' '.join([prog, *path])} --help'")
                k += 2
            else:
                k += 1
    except Exception:  # pragma: no cover - the parser then says what it says
        return None
    return None
