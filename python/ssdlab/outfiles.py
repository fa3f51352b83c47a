"""Writing a file whole or not at all: a report, a log, a gallery page, a results table.

A file is written into a temporary file beside it, ``.NAME.PID.tmp``, and renamed over it.
Ctrl-C and SIGTERM are held off from the moment that file is made until it is renamed (or
removed), so that neither leaves one behind; one that a killed process left (SIGKILL, a crash)
is removed by the next process that writes the same file."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Iterator
from pathlib import Path


def temp_path(path: Path) -> Path:
    """The temporary file this process writes ``path`` through."""
    return path.with_name(f".{path.name}.{os.getpid()}.tmp")


def remove_stale_temps(path: Path) -> list[Path]:
    """Remove the temporary files that earlier processes writing ``path`` left behind (their
    process is gone, or is this one); the files removed."""
    removed = []
    try:
        candidates = list(path.parent.glob(f".{path.name}.*.tmp"))
    except OSError:
        return removed
    for tmp in candidates:
        pid = tmp.name[len(path.name) + 2:-len(".tmp")]
        if pid.isdigit() and (int(pid) == os.getpid() or not _alive(int(pid))):
            with contextlib.suppress(OSError):
                tmp.unlink()
                removed.append(tmp)
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # someone else's process: alive
        return True
    return True


@contextlib.contextmanager
def signals_held() -> Iterator[None]:
    """Ctrl-C and SIGTERM held off within the block and acted on after it (in the main thread;
    elsewhere signals are not delivered to Python code anyway)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    got: list[int] = []
    held = (signal.SIGINT, signal.SIGTERM)
    old = {sig: signal.signal(sig, lambda signum, frame: got.append(signum)) for sig in held}
    try:
        yield
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)
        for sig in dict.fromkeys(got):
            handler = old[sig]
            if callable(handler):
                handler(sig, None)
            elif handler == signal.SIG_DFL:
                os.kill(os.getpid(), sig)


def write_whole(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` so that the file is either as it was or complete: into a
    temporary file beside it, renamed over it once written. (A directory that takes no new
    file but holds a writable ``path`` is written directly.)"""
    remove_stale_temps(path)
    tmp = temp_path(path)
    with signals_held():
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except OSError:
            path.write_text(text)
            return
        try:
            with os.fdopen(fd, "w") as f:
                f.write(text)
            if path.exists():
                os.chmod(tmp, path.stat().st_mode & 0o7777)
            os.replace(tmp, path)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
