"""What every ``ssdlab`` command shares: the console, one-line errors, Ctrl-C, the progress of
a simulation, checks of common options and writing a report (to standard output, or to a file
whole or not at all)."""

from __future__ import annotations

import errno
import functools
import os
import sys
from enum import Enum
from pathlib import Path
from typing import Annotated, NoReturn, Optional

import typer
from rich.console import Console

from .. import api
from ..arguments import SEED_MAX
from ..config import ProfileError
from ..fio import FioJobError
from ..printable import escape_controls
from ..system import SystemFileError
from ..outfiles import write_whole  # noqa: F401  (the commands write reports with it)
from ..units import UnitError

#: What bad input to a simulation raises (a job file, profile, system file, size or option the
#: core refuses): reported as its first line. All are ValueErrors.
BAD_INPUT = (FioJobError, ProfileError, SystemFileError, UnitError, api.SimulationError, ValueError)


def console(**kw) -> Console:
    """A console that prints text as given: no markup, no emoji codes (``:100:`` stays
    ``:100:``), no highlighting. Messages carry paths, option values and profile names the
    user wrote; none of it is rich markup."""
    return Console(markup=False, emoji=False, highlight=False, **kw)


err = console(stderr=True, soft_wrap=True)


def note(message: str) -> None:
    """An information line on stderr (``ssdlab: ...``), the user's text in it escaped."""
    err.print(f"ssdlab: {shown(message)}", markup=False)


def warn(message: str) -> None:
    """A warning: one line on stderr."""
    err.print(f"ssdlab: warning: {shown(message)}", markup=False)


def fail(message: str) -> NoReturn:
    """Bad input: one line on stderr, exit status 2, no traceback."""
    err.print(f"ssdlab: error: {shown(message)}", markup=False)
    raise typer.Exit(2)


def shown(message: str) -> str:
    """``message`` with the control characters a user's file put in it escaped; line breaks
    and tabs stay."""
    return escape_controls(message, keep="\n\t")


class Terminated(KeyboardInterrupt):
    """SIGTERM (a batch system's time limit, ``kill``): handled as Ctrl-C is."""


def terminate_as_interrupt() -> None:
    """SIGTERM raises :class:`Terminated` (a KeyboardInterrupt), so that it stops a command
    where Ctrl-C would, with its message and clean-up."""
    import signal

    def _term(signum, frame):
        raise Terminated()

    signal.signal(signal.SIGTERM, _term)


def interruptible(command):
    """A command that may simulate for long: Ctrl-C ends it with one line on stderr and
    exit status 130 (the shell's for SIGINT; SIGTERM: 143), no traceback, no partial output file."""

    @functools.wraps(command)
    def wrapper(*args, **kwargs):
        try:
            return command(*args, **kwargs)
        except Terminated:
            err.print("ssdlab: terminated", markup=False)
            raise typer.Exit(143) from None
        except KeyboardInterrupt:
            err.print("ssdlab: interrupted", markup=False)
            raise typer.Exit(130) from None

    return wrapper


def simulating():
    """Around a simulation: its progress on the terminal (only when stdout and stderr are
    terminals; see ``ssdlab.progress``)."""
    from ..progress import terminal_progress

    return terminal_progress()


def run_time_ns(value: str, flag: str = "--runtime") -> int:
    """A file workload's run time from the command line (bare numbers are seconds), in ns;
    bad values fail in one line naming ``flag``."""
    from ..filework import MAX_NS
    from ..units import parse_time_ns, unit_reason

    try:
        ns = parse_time_ns(value, "s")
    except (ValueError, UnitError) as e:
        fail(f"{flag} {value}: {unit_reason(e)}")
    if not 0 < ns <= MAX_NS:
        fail(f"{flag} {value}: expected a time above 0 and at most {MAX_NS // 10**9 // 86400:,} days")
    return ns


def check_seed(seed: int) -> None:
    if not 0 <= seed <= SEED_MAX:
        fail(f"--seed {seed}: expected a whole number from 0 to {SEED_MAX}")


def check_scheduler(name: str | None, option: str) -> None:
    """A scheduler named on the command line exists; said with its option if not."""
    if name is None:
        return
    from ..iosched import SchedulerError, check_name

    try:
        check_name(name)
    except SchedulerError as e:
        fail(f"{option}: {e}")


def overrides(pairs: list[str], flag: str = "--set", form: str = "OPTION=VALUE") -> dict[str, str]:
    """``KEY=VALUE`` options (``--set``, ``--profile-set``, ...) as a dict."""
    out = {}
    for p in pairs:
        key, eq, value = p.partition("=")
        if not eq or not key.strip():
            fail(f"{flag} {p!r}: expected {form}")
        out[key.strip()] = value.strip()
    return out


class OutputFormat(str, Enum):
    normal = "normal"
    json = "json"
    json_plus = "json+"
    terse = "terse"


class TextOrJson(str, Enum):
    text = "text"
    json = "json"


#: ``--memory-limit`` of the commands that simulate.
MemoryLimit = Annotated[Optional[str], typer.Option(help="refuse a run that would need more memory than this: a size (16GiB), a share of the available memory (90%) or none (default: $SSDLAB_MEMORY_LIMIT, else 75% of MemAvailable)")]


class StdoutError(Exception):
    """Writing to standard output failed (a full disk, ``ulimit -f``, a closed pipe)."""

    def __init__(self, error: OSError):
        super().__init__(error.strerror or str(error))
        self.error = error


class _GuardedStdout:
    """Standard output whose write errors are :class:`StdoutError`, told apart from every
    other OSError, so that the command fails with one line instead of a traceback or, when the
    error comes at the flush at exit, with status 0 and a truncated report."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, text: str) -> int:
        """Write all of ``text``, or raise: Python's buffered writer reports a write cut short
        (a file size limit reached) only in its return value, which its text layer drops."""
        buffer = getattr(self._stream, "buffer", None)
        try:
            if buffer is None:
                return self._stream.write(text)
            self._stream.flush()
            data = memoryview(text.encode(self._stream.encoding or "utf-8", self._stream.errors or "strict"))
            while data:
                n = buffer.write(data)
                if not n:
                    raise OSError(errno.EIO, "the write made no progress")
                data = data[n:]
            return len(text)
        except OSError as e:
            raise StdoutError(e) from None

    def flush(self) -> None:
        try:
            self._stream.flush()
        except OSError as e:
            raise StdoutError(e) from None

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


def usage_exceptions() -> tuple[type[Exception], type[Exception], type[BaseException]]:
    """The exceptions of the command-line parser under Typer: a usage error (ClickException),
    no arguments where help is shown instead, and Abort. Typer 0.2x carries its own copy of
    click (``typer._click``); older ones use click itself."""
    try:
        from typer._click import exceptions as parser
    except ImportError:  # pragma: no cover - Typer before it carried click
        from click import exceptions as parser
    no_args = getattr(parser, "NoArgsIsHelpError", None) or type("_Never", (Exception,), {})
    abort = getattr(parser, "Abort", None)
    if abort is None:
        import typer

        abort = typer.Abort
    return parser.ClickException, no_args, abort


def guard_stdout() -> None:
    """Standard output's write errors as :class:`StdoutError` (see :class:`_GuardedStdout`)."""
    if not isinstance(sys.stdout, _GuardedStdout) and sys.stdout is not None:
        sys.stdout = _GuardedStdout(sys.stdout)


def stdout_failed(e: StdoutError) -> NoReturn:
    """End a command whose output could not be written: one line and status 2, as a failed
    ``--output``; a reader that closed its pipe (``| head``) ends it quietly, as SIGPIPE would.
    Standard output is pointed at /dev/null first, so that nothing fails again at exit."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.__stdout__.fileno())
        os.close(devnull)
    except (OSError, AttributeError, ValueError):
        pass
    if e.error.errno == errno.EPIPE:
        raise SystemExit(141)
    err.print(f"ssdlab: error: standard output: {e}", markup=False)
    raise SystemExit(2)


def print_json(value) -> None:
    """Strict JSON (non-finite numbers as null), indented, to standard output."""
    from ..jsonout import dumps

    sys.stdout.write(dumps(value, indent=2) + "\n")


def check_output(path: Path, option: str) -> None:
    """Fail now, not after the simulation, if the report cannot be written to ``path``."""
    parent = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        fail(f"{option} {path}: is a directory; give a file name")
    if not parent.is_dir():
        why = "not a directory" if parent.exists() else "no such directory"
        fail(f"{option} {path}: {why} ({parent})")
    if path.exists() and not os.access(path, os.W_OK) or not path.exists() and not os.access(parent, os.W_OK | os.X_OK):
        fail(f"{option} {path}: permission denied")


def deliver(text: str, output: Optional[Path], option: str = "--output") -> None:
    """The report to ``output`` (whole or not at all) or to standard output."""
    if output:
        try:
            write_whole(output, text)
        except OSError as e:
            fail(f"{option} {output}: {e.strerror or e}")
    else:
        sys.stdout.write(text)
