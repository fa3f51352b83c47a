"""Running a grid: executors, the journal of finished runs, progress and the Parquet file.

The calling process expands the grid, builds each run's spec and hands ``run_task(key,
spec_json)`` to an executor: local processes (``ProcessPoolExecutor``), a Dask
cluster (``Client(address).get_executor()``; dask-jobqueue's clusters are Dask clusters) or
any ``concurrent.futures.Executor``. Every finished run is appended to the journal beside
the output (``OUT.runs.jsonl``, one JSON line per run, flushed as it is written), keyed by
the run's hash; a sweep run again skips what the journal has. The Parquet file is written at
the end from the journal's records, in the grid's order, so the rows do not depend on the
executor, the number of workers or the order runs finished in.
"""

from __future__ import annotations

import concurrent.futures as cf
import json
import os
import sys
import threading
import time
from collections import deque
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Union

from pydantic import ConfigDict, StrictBool, StrictInt, TypeAdapter, ValidationError
from typing_extensions import TypedDict

from .grid import Grid, Run, load_grid
from .task import error_text, run_task, worker_init

__all__ = ["SweepError", "SweepInterrupted", "SweepSummary", "journal_path", "prestart", "run_sweep",
           "write_parquet"]


class SweepError(ValueError):
    """A sweep that cannot start: an output that cannot be written, an unreachable cluster."""


class SweepInterrupted(Exception):
    """Ctrl-C (or SIGTERM) stopped the sweep; what finished is in the journal."""

    def __init__(self, done: int, total: int, journal: Path):
        super().__init__(f"interrupted: {done} of {total} runs done, kept in {journal}; run the same sweep "
                         "again to run the rest")
        self.done, self.total, self.journal = done, total, journal


@dataclass
class SweepSummary:
    runs: int       # runs in the grid
    ran: int        # runs this call ran (or tried: failures included)
    reused: int     # runs the journal already had
    failed: int     # runs whose row has an error (this call's and reused ones)
    rows: int       # rows written
    out: Path
    journal: Path
    wall_s: float   # this call, start to end
    sim_s: float    # time the runs of this call spent in the simulation (summed over workers)
    task_s: float   # time the workers spent in this call's tasks (summed)

    def line(self) -> str:
        parts = [f"{self.runs} runs: {self.ran} ran"]
        if self.reused:
            parts.append(f"{self.reused} from the journal")
        parts.append(f"{self.failed} failed")
        return f"{', '.join(parts)}; wrote {self.out} ({self.rows} rows) in {self.wall_s:.1f} s"


def journal_path(out: str | os.PathLike[str]) -> Path:
    """The journal of a sweep writing ``out``: ``OUT.runs.jsonl`` beside it."""
    p = Path(out)
    return p.with_name(p.name + ".runs.jsonl")


# ---- the journal -----------------------------------------------------------------------------

_Cell = Union[StrictBool, StrictInt, float, str, None]


class JournalRecord(TypedDict):
    """One finished run, as a line of the journal holds it (checked when read back)."""

    __pydantic_config__ = ConfigDict(strict=True, extra="forbid")  # type: ignore[misc]
    key: str
    index: int
    params: dict[str, _Cell]
    error: str | None
    rows: list[dict[str, _Cell]]
    sim_s: float
    task_s: float


RECORD: TypeAdapter[JournalRecord] = TypeAdapter(JournalRecord)


def read_records(data: bytes) -> dict[str, dict[str, Any]]:
    """The whole records of a journal's bytes, by key. A line that is not one (cut short by a
    crash, damaged, or of another version) is dropped: its run runs again."""
    records: dict[str, dict[str, Any]] = {}
    for line in data.splitlines():
        try:
            rec = RECORD.validate_json(line)
        except ValidationError:
            continue
        records[rec["key"]] = dict(rec)
    return records


class Journal:
    """Finished runs, one JSON line each, appended as they finish. A line cut short by a
    crash is dropped when the journal is opened again; a second sweep writing the same
    journal at the same time is refused."""

    def __init__(self, path: Path):
        self.path = path
        self.records: dict[str, dict[str, Any]] = {}
        self._fh = open(path, "a+b")
        try:
            import fcntl

            fcntl.flock(self._fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except ImportError:  # not on POSIX: no lock
            pass
        except OSError:
            self._fh.close()
            raise SweepError(f"{path}: another sweep is writing this journal (same --out)") from None
        self._fh.seek(0)
        data = self._fh.read()
        end = data.rfind(b"\n") + 1
        self.records.update(read_records(data[:end]))
        if end < len(data):  # a line cut short: drop it, so that the next one starts clean
            self._fh.truncate(end)
        self._synced = time.monotonic()

    #: Seconds between syncs to the disk. Every record is flushed to the operating system
    #: as it is added, so a killed sweep loses nothing; a crash of the machine may lose the
    #: last second's.
    SYNC_EVERY = 1.0

    def add(self, record: dict[str, Any]) -> dict[str, Any]:
        text = json.dumps(record, separators=(",", ":")) + "\n"
        self._fh.write(text.encode())
        self._fh.flush()
        now = time.monotonic()
        if now - self._synced >= self.SYNC_EVERY:
            os.fsync(self._fh.fileno())
            self._synced = now
        rec = json.loads(text)  # what a later sweep will read back, exactly
        self.records[rec["key"]] = rec
        return rec

    def close(self) -> None:
        if self._fh.closed:
            return
        self._fh.flush()
        os.fsync(self._fh.fileno())
        empty = os.fstat(self._fh.fileno()).st_size == 0
        self._fh.close()
        if empty:  # nothing ran (an unreachable cluster, say): leave no file behind
            self.path.unlink(missing_ok=True)


# ---- executors -------------------------------------------------------------------------------


def default_workers() -> int:
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:
        return os.cpu_count() or 1


class _Pool:
    """An executor and how many runs to keep in flight on it."""

    def __init__(self, executor: cf.Executor, window: int, own: bool = False):
        self.executor, self._window, self.own = executor, window, own

    def window(self) -> int:
        return self._window

    def submit(self, fn: Callable, *args: Any) -> cf.Future:
        return self.executor.submit(fn, *args)

    def restart(self) -> bool:
        """A new executor after the old one broke; False if this one cannot be renewed."""
        return False

    def close(self) -> None:
        if self.own:
            self.executor.shutdown(wait=True)

    def kill(self) -> None:
        if self.own:
            self.executor.shutdown(wait=False, cancel_futures=True)


def _context(start_method: str | None):
    """How local workers start: ``forkserver`` where there is one (a fresh server process
    imports ssdlab once and forks the workers from it), else ``spawn``. Neither copies the
    calling process, so both are safe whatever threads it runs; the workers are the same."""
    import multiprocessing

    if start_method is None:
        start_method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
    ctx = multiprocessing.get_context(start_method)
    if start_method == "forkserver":
        # The server imports the task's module (not the caller's __main__, a command-line
        # script for one); workers forked from it start in milliseconds.
        ctx.set_forkserver_preload(["ssdlab.sweep.task"])
    return ctx


def prestart(workers: int | None = None, scheduler: Any = None, executor: cf.Executor | None = None,
             start_method: str | None = None) -> None:
    """Start the local workers' forkserver now, so that it imports ssdlab while the caller
    reads and checks the grid (nothing to do for spawn or a cluster)."""
    if scheduler is not None or executor is not None or (workers is not None and workers < 1):
        return
    if _context(start_method).get_start_method() == "forkserver":
        from multiprocessing import forkserver

        forkserver.ensure_running()


class _LocalPool(_Pool):
    """Local worker processes, started by forkserver or spawn (see :func:`_context`)."""

    def __init__(self, workers: int, start_method: str | None = None):
        self.workers = workers
        self.ctx = _context(start_method)
        super().__init__(self._new(), 2 * workers, own=True)

    def _new(self) -> cf.ProcessPoolExecutor:
        return cf.ProcessPoolExecutor(max_workers=self.workers, mp_context=self.ctx, initializer=worker_init,
                                      initargs=(os.getpid(),))

    def restart(self) -> bool:
        self.kill()
        self.executor = self._new()
        return True

    def kill(self) -> None:
        """Stop the workers now (this pool's own processes, by their ids)."""
        procs = list((getattr(self.executor, "_processes", None) or {}).values())
        self.executor.shutdown(wait=False, cancel_futures=True)
        for p in procs:
            if p.is_alive():
                p.terminate()
        for p in procs:
            p.join(timeout=5)


class _DaskPool(_Pool):
    """A Dask cluster through its scheduler's address (or a Client or a cluster object)."""

    def __init__(self, scheduler: Any):
        try:
            from distributed import Client
        except ImportError:  # pragma: no cover - a declared dependency
            raise SweepError("a Dask scheduler needs the 'distributed' package") from None
        if isinstance(scheduler, Client):
            self.client, own_client = scheduler, False
        else:
            if isinstance(scheduler, str):
                check_scheduler(scheduler)
            try:
                self.client = Client(scheduler, timeout="20s", set_as_default=False)
            except (OSError, TimeoutError, ValueError) as e:
                raise SweepError(f"cannot reach the Dask scheduler at {scheduler}: {e}") from None
            own_client = True
        self._own_client = own_client
        self._checked = 0.0
        self._threads = 1
        super().__init__(self.client.get_executor(pure=False), 2, own=False)

    def window(self) -> int:
        now = time.monotonic()
        if now - self._checked > 2.0:  # the cluster may grow or shrink (adaptive jobqueue clusters)
            self._checked = now
            try:
                self._threads = sum(self.client.nthreads().values())
            except Exception:  # keep the last count
                pass
        return max(2 * self._threads, 2)

    def close(self) -> None:
        if self._own_client:
            self.client.close()

    def kill(self) -> None:
        self.executor.shutdown(wait=False)
        self.close()


#: the schemes of a Dask scheduler's address that name a host and port
_NETWORK_SCHEMES = ("tcp", "tls", "ws", "wss", "ucx")


def check_scheduler(address: str, timeout: float = 5.0) -> None:
    """Refuse, at once and in one line, a scheduler address that is not one (``banana``) or
    where nothing answers: a Dask client would try for its whole timeout, then again when it
    is collected, and print a traceback."""
    import socket

    from distributed.comm.addressing import parse_address, parse_host_port

    expected = "expected a Dask scheduler's address, e.g. tcp://HOST:8786"
    try:
        scheme, location = parse_address(address)
    except ValueError as e:
        raise SweepError(f"--scheduler {address}: {e}; {expected}") from None
    if scheme not in _NETWORK_SCHEMES:
        return
    try:
        host, port = parse_host_port(location)
    except ValueError:
        raise SweepError(f"--scheduler {address}: no HOST:PORT in it; {expected}") from None
    if not host or not 0 < port < 65536:
        raise SweepError(f"--scheduler {address}: no host, or a port out of range; {expected}")
    try:
        with socket.create_connection((host, port), timeout=timeout):
            pass
    except OSError as e:
        why = "no answer" if isinstance(e, TimeoutError) else e.strerror or str(e)
        raise SweepError(f"cannot reach the Dask scheduler at {address}: {why}") from None


def _pool(workers: int | None, scheduler: Any, executor: cf.Executor | None, start_method: str | None) -> _Pool:
    if executor is not None:
        n = getattr(executor, "_max_workers", None) or workers or default_workers()
        return _Pool(executor, 2 * n)
    if scheduler is not None:
        return _DaskPool(scheduler)
    n = workers if workers is not None else default_workers()
    if n < 1:
        raise SweepError(f"--workers {n}: expected at least 1")
    return _LocalPool(n, start_method)


def make_pool(workers: int | None = None, scheduler: Any = None) -> _Pool:
    """Local worker processes (``workers``, default one per CPU) or a Dask cluster
    (``scheduler``: an address, a Client or a cluster), for other commands' runs: ``submit``
    then ``close``."""
    return _pool(workers, scheduler, None, None)


# ---- progress --------------------------------------------------------------------------------


class _Progress:
    """A rich progress bar on stderr: runs done, failures, elapsed time and ETA."""

    def __init__(self, enabled: bool, total: int, reused: int):
        self.bar = None
        if not enabled or total == 0:
            return
        from rich.console import Console
        from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                                   TimeRemainingColumn)

        label = "sweep" + (f" ({reused} runs from the journal)" if reused else "")
        self.bar = Progress(TextColumn(label, markup=False), BarColumn(), MofNCompleteColumn(), TextColumn("runs"),
                            TextColumn("{task.fields[failed]} failed"), TimeElapsedColumn(), TextColumn("ETA"),
                            TimeRemainingColumn(), console=Console(stderr=True), transient=False)
        self.bar.start()
        self.task = self.bar.add_task("sweep", total=total, failed=0)
        self.failed = 0

    def advance(self, failed: bool) -> None:
        if self.bar is not None:
            self.failed += failed
            self.bar.update(self.task, advance=1, failed=self.failed)

    def stop(self) -> None:
        if self.bar is not None:
            self.bar.stop()


# ---- the sweep -------------------------------------------------------------------------------


def check_out(out: Path) -> None:
    """Fail now, not after the sweep, if ``out`` cannot be written."""
    parent = out.parent if str(out.parent) else Path(".")
    if out.is_dir():
        raise SweepError(f"--out {out}: is a directory; give a file name")
    if not parent.is_dir():
        raise SweepError(f"--out {out}: no such directory ({parent})")
    if not os.access(parent, os.W_OK | os.X_OK) or (out.exists() and not os.access(out, os.W_OK)):
        raise SweepError(f"--out {out}: permission denied")


def default_out(grid: Grid) -> Path:
    return grid.path.with_suffix(".parquet")


def run_sweep(
    grid: Grid | str | os.PathLike[str],
    out: str | os.PathLike[str] | None = None,
    *,
    workers: int | None = None,
    scheduler: Any = None,
    executor: cf.Executor | None = None,
    retry_failed: bool = False,
    progress: bool | None = None,
    task: Callable[[str, str], dict[str, Any]] = run_task,
    start_method: str | None = None,
) -> SweepSummary:
    """Run every run of ``grid`` that the journal beside ``out`` does not have, then write
    ``out`` (Parquet; default: the grid file's name with ``.parquet``).

    Executors: ``workers`` local processes (default: one per CPU), or a Dask cluster at
    ``scheduler`` (``"tcp://host:8786"``, a ``distributed.Client`` or a cluster object), or
    any ``concurrent.futures.Executor`` as ``executor``. ``retry_failed`` runs again the runs
    the journal has with an error. ``progress``: a progress bar on stderr (default: when
    stderr is a terminal). Ctrl-C raises :class:`SweepInterrupted`; what finished is kept.
    ``start_method``: how local workers start, ``"forkserver"`` (the default where there is
    one) or ``"spawn"``. ``task`` is for tests: what a worker runs (``run_task``)."""
    start = time.perf_counter()
    if not isinstance(grid, Grid):
        prestart(workers, scheduler, executor, start_method)
    g = grid if isinstance(grid, Grid) else load_grid(grid)
    out_path = Path(out) if out is not None else default_out(g)
    check_out(out_path)
    if workers is not None and (scheduler is not None or executor is not None):
        raise SweepError("--workers is the number of local processes; a Dask cluster has its own workers")
    runs = g.runs
    # pyarrow is imported while the runs run, not after them; once
    # the first runs are handed out, so as not to hold up their start.
    warm = threading.Thread(target=_import_writer, daemon=True)
    journal = Journal(journal_path(out_path))
    try:
        records = journal.records
        todo = [r for r in runs if r.key not in records or (retry_failed and records[r.key].get("error"))]
        reused = len(runs) - len(todo)
        sim_s = task_s = 0.0
        if todo:
            pool = _pool(workers, scheduler, executor, start_method)
            bar = _Progress(sys.stderr.isatty() if progress is None else progress, len(todo), reused)
            try:
                sim_s, task_s = _execute(g, todo, journal, pool, bar, task, warm.start)
            except KeyboardInterrupt:
                pool.kill()
                bar.stop()
                done = sum(r.key in journal.records for r in runs)
                raise SweepInterrupted(done, len(runs), journal.path) from None
            except BaseException:
                pool.kill()
                raise
            finally:
                bar.stop()
            pool.close()
        if not warm.is_alive() and warm.ident is None:
            warm.start()
        warm.join()
        n_rows = write_parquet(out_path, g, runs, journal.records)
    finally:
        journal.close()
    failed = sum(1 for r in runs if journal.records[r.key].get("error"))
    return SweepSummary(len(runs), len(todo), reused, failed, n_rows, out_path, journal.path,
                        time.perf_counter() - start, sim_s, task_s)


def _import_writer() -> None:
    try:
        import pyarrow.json
        import pyarrow.parquet  # noqa: F401
    except Exception:  # write_parquet will say what is missing
        pass


def _execute(g: Grid, todo: list[Run], journal: Journal, pool: _Pool, bar: _Progress,
             task: Callable, started: Callable[[], None] = lambda: None) -> tuple[float, float]:
    """Run ``todo`` on ``pool``, recording each run as it finishes. A local worker that dies
    (the process, not the run: a run's own failure is its error row) takes the runs in flight
    with it; those are run again one at a time, and one that kills its worker alone is
    recorded as failed."""
    queue = deque(todo)
    suspects: deque[Run] = deque()  # in flight when a worker died: run again, one at a time
    crashed: set[str] = set()
    pending: dict[cf.Future, Run] = {}
    totals = [0.0, 0.0]

    def record(run: Run, answer: dict[str, Any]) -> None:
        rec = journal.add({"key": run.key, "index": run.index, "params": run.params, "error": answer.get("error"),
                           "rows": answer.get("rows") or [], "sim_s": answer.get("sim_s", 0.0),
                           "task_s": answer.get("task_s", 0.0)})
        totals[0] += rec["sim_s"] or 0.0
        totals[1] += rec["task_s"] or 0.0
        bar.advance(bool(rec["error"]))

    def submit(run: Run) -> bool:
        """Send ``run`` to the pool; False if the pool broke since the last wait (a worker
        died): the run goes back to the front of its line, and the broken futures in flight say
        which runs to try again."""
        try:
            spec_json = g.spec(run).model_dump_json()
        except Exception as e:  # a combination the grid's checks could not see: the run's error
            record(run, {"error": error_text(e)})
            return True
        try:
            pending[pool.submit(task, run.key, spec_json)] = run
        except BrokenProcessPool:
            (suspects if run.key in crashed else queue).appendleft(run)
            return False
        return True

    while queue or suspects or pending:
        while not any(r.key in crashed for r in pending.values()):
            if suspects:
                if pending or not submit(suspects.popleft()):
                    break
            elif queue and len(pending) < pool.window():
                if not submit(queue.popleft()):
                    break
            else:
                break
        if started is not None:
            started()  # once, when the first runs are out
            started = None
        if not pending:
            if queue or suspects:  # the pool broke with nothing in flight (a worker killed idle)
                pool.restart()
            continue
        done, _ = cf.wait(list(pending), timeout=1.0, return_when=cf.FIRST_COMPLETED)
        broken: list[Run] = []
        for f in done:
            run = pending.pop(f)
            try:
                answer = f.result()
            except BrokenProcessPool:
                broken.append(run)
                continue
            except Exception as e:  # the executor's failure (a Dask worker lost, say), not the run's
                answer = {"error": f"the run's worker failed: {error_text(e)}"}
            record(run, answer)
        if not broken:
            continue
        # The pool is gone, and with it every run in flight.
        for f in list(pending):
            run = pending.pop(f)
            if f.done() and not f.cancelled() and f.exception() is None:
                record(run, f.result())
            else:
                broken.append(run)
        renewed = pool.restart()
        for run in broken:
            if not renewed or len(broken) == 1 or run.key in crashed:
                record(run, {"error": "the worker process running it died"})
            else:
                crashed.add(run.key)
                suspects.append(run)
    return totals[0], totals[1]


# ---- the table -------------------------------------------------------------------------------


def table_rows(g: Grid, runs: list[Run], records: dict[str, dict[str, Any]]) -> tuple[list[dict[str, Any]], list[str]]:
    """The rows of the results, in the grid's order, and their columns in order: the run,
    its parameters, its error, then the results."""
    columns = ["run", "run_key", *g.keys, "error"]
    seen = set(columns)
    rows = []
    for run in runs:
        rec = records[run.key]
        head = {"run": run.index, "run_key": run.key, **run.params, "error": rec.get("error")}
        for r in rec["rows"] or [{}]:
            for c in r:
                if c not in seen:
                    seen.add(c)
                    columns.append(c)
            rows.append({**head, **r})
    return rows, columns


_INT64 = (-(1 << 63), (1 << 63) - 1)


def _text(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def column_kind(values: list[Any]) -> str:
    """A column's Parquet type: null, bool, int64, uint64, double or string (mixed numbers
    are doubles; anything else mixed is text)."""
    given = [v for v in values if v is not None]
    if not given:
        return "null"
    if all(isinstance(v, bool) for v in given):
        return "bool"
    if all(isinstance(v, int) and not isinstance(v, bool) for v in given):
        if all(_INT64[0] <= v <= _INT64[1] for v in given):
            return "int64"
        if all(0 <= v < (1 << 64) for v in given):
            return "uint64"
        return "string"
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in given):
        return "double"
    if all(isinstance(v, str) for v in given):
        return "string"
    return "string"


def _table(rows: list[dict[str, Any]], columns: list[str]):
    """The rows as an Arrow table, through Arrow's JSON reader with the types set here (it
    keeps every double exactly and, unlike building arrays from Python lists, does not load
    pandas: a sweep's process has better things to do with its CPU)."""
    import io
    import math

    import pyarrow as pa
    import pyarrow.json as pj

    kinds = {c: column_kind([r.get(c) for r in rows]) for c in columns}
    types = {"null": pa.null(), "bool": pa.bool_(), "int64": pa.int64(), "uint64": pa.uint64(),
             "double": pa.float64(), "string": pa.string()}
    texts = [c for c in columns if kinds[c] == "string"]
    lines = []
    for r in rows:
        if texts:
            r = {**r, **{c: _text(r[c]) for c in texts if r.get(c) is not None}}
        for c in columns:
            v = r.get(c)
            if isinstance(v, float) and not math.isfinite(v):  # JSON has no NaN: build arrays instead
                return pa.table({c: pa.array([_cell_as(x, kinds[c]) for x in (q.get(c) for q in rows)],
                                             type=types[kinds[c]]) for c in columns})
        lines.append(json.dumps(r, separators=(",", ":")))
    schema = pa.schema([(c, types[kinds[c]]) for c in columns])
    data = ("\n".join(lines) + "\n").encode()
    return pj.read_json(io.BytesIO(data), read_options=pj.ReadOptions(block_size=max(1 << 20, len(data) + 1)),
                        parse_options=pj.ParseOptions(explicit_schema=schema, unexpected_field_behavior="error"))


def _cell_as(v: Any, kind: str) -> Any:
    if v is None:
        return None
    return _text(v) if kind == "string" else float(v) if kind == "double" else v


def write_parquet(out: Path, g: Grid, runs: list[Run], records: dict[str, dict[str, Any]]) -> int:
    """Write the results table (atomically: a temporary file renamed); returns its rows."""
    import pyarrow.parquet as pq

    from ..outfiles import remove_stale_temps, temp_path

    rows, columns = table_rows(g, runs, records)
    table = _table(rows, columns).replace_schema_metadata({"ssdlab.grid": g.text, "ssdlab.grid_file": str(g.path)})
    remove_stale_temps(out)
    tmp = temp_path(out)
    try:
        pq.write_table(table, tmp)
        os.replace(tmp, out)
    finally:
        if tmp.exists():
            tmp.unlink()
    return len(rows)
