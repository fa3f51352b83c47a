"""Long work: its progress on a terminal (and only there), the same result with or without an
observer, and Ctrl-C ending a simulation within a second with exit status 130."""

import json
import os
import pty
import select
import signal
import subprocess
import sys
import time

import pytest

import ssdlab
from ssdlab import _core, api

# An hour of simulated random writes: many minutes of wall clock.
LONG_JOB = "[long]\nioengine=libaio\ndirect=1\nrw=randwrite\nbs=4k\niodepth=32\nruntime=3600\ntime_based\n"
# A few seconds simulated on a slice of the drive, preconditioned: about a second of wall clock.
SHORT_JOB = "[short]\nioengine=libaio\ndirect=1\nrw=randwrite\nbs=4k\niodepth=32\nruntime=12\ntime_based\n"
SHORT_ARGS = ["--scale", "0.05", "--precondition", "random:0.25"]

# The command line, loaded first: "ready" on stdout once the simulation is about to start.
ENTRY = "import sys\nfrom ssdlab.cli import main\nprint('ready', flush=True)\nsys.argv[0] = 'ssdlab'\nmain()\n"


@pytest.mark.parametrize("phase", ["run", "precondition"])
def test_ctrl_c_stops_a_simulation_at_once_with_status_130_and_no_output_file(tmp_path, phase):
    job = tmp_path / "long.fio"
    job.write_text(LONG_JOB)
    out = tmp_path / "x.json"
    args = ["run", str(job), "--output", str(out), "--output-format", "json"]
    if phase == "precondition":
        args += ["--precondition", "random:2"]  # over a minute on the 850 PRO
    p = subprocess.Popen([sys.executable, "-c", ENTRY, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, cwd=tmp_path)
    try:
        assert p.stdout.readline() == "ready\n"
        time.sleep(1.0)
        assert p.poll() is None, p.stderr.read()
        p.send_signal(signal.SIGINT)
        sent = time.monotonic()
        stdout, stderr = p.communicate(timeout=2)
        took = time.monotonic() - sent
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()
    assert p.returncode == 130, stderr
    assert took < 2
    assert stderr.splitlines() == ["ssdlab: interrupted"], stderr
    assert stdout == ""
    assert sorted(f.name for f in tmp_path.iterdir()) == ["long.fio"], "no output file, complete or not"


def _in_terminal(args: list[str], cwd) -> tuple[int, str]:
    """Run ``ssdlab ARGS`` with a pseudo-terminal as stdin, stdout and stderr; its exit status
    and everything it wrote."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: its terminal is the pty
        try:
            os.chdir(cwd)
            env = dict(os.environ, TERM="xterm", COLUMNS="160")
            os.execve(sys.executable, [sys.executable, "-m", "ssdlab", *args], env)
        finally:
            os._exit(127)
    chunks = []
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([fd], [], [], 0.5)
            if not ready:
                continue
            try:
                data = os.read(fd, 65536)
            except OSError:  # EIO: the child has closed the terminal
                break
            if not data:
                break
            chunks.append(data)
    finally:
        os.close(fd)
        if time.monotonic() >= deadline:
            os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), b"".join(chunks).decode(errors="replace")


def test_progress_is_drawn_on_a_terminal_and_nowhere_else(tmp_path, cli):
    job = tmp_path / "short.fio"
    job.write_text(SHORT_JOB)
    status, shown = _in_terminal(["run", str(job), *SHORT_ARGS], tmp_path)
    assert status == 0, shown
    assert "precondition sda" in shown and "fill" in shown and "random pass" in shown
    assert "sim " in shown and "/12.0 s" in shown and " req" in shown and "real time" in shown
    assert "Run status group 0" in shown  # the report follows, the progress line cleared
    # Output redirected (a pipe here): the same run says nothing of its progress.
    p = cli("run", str(job), *SHORT_ARGS)
    assert p.returncode == 0, p.stderr
    assert "Run status group 0" in p.stdout
    for text in (p.stdout, p.stderr):
        assert "precondition sda" not in text and "real time" not in text and "\x1b[" not in text


def _spec():
    return api.build(SHORT_JOB, profile="samsung-850-pro", seed=3, scale=0.05, precondition="random:0.25",
                     interval="1s")


def test_an_observer_hears_each_phase_and_changes_nothing():
    spec = _spec()
    text = json.dumps(spec.core)
    seen = []
    # Bit for bit the same JSON, observed or not.
    assert _core.run_json(text, lambda d: seen.append(d)) == _core.run_json(text)
    phases = [d["phase"] for d in seen]
    assert phases == sorted(phases, key=["precondition", "run", "drain"].index)
    assert phases.count("precondition") >= 2 and phases.count("run") >= 3 and phases[-1] == "drain"
    pre = [d for d in seen if d["phase"] == "precondition"]
    assert pre[0]["device"] == "sda" and pre[0]["passes"] == 0.25 and pre[0]["fill"] == 0.0
    runs = [d for d in seen if d["phase"] == "run"]
    for a, b in zip(runs, runs[1:]):
        assert a["now_ns"] <= b["now_ns"] and a["requests"] <= b["requests"] and a["fraction"] <= b["fraction"]
    assert runs[-1]["end_ns"] - runs[-1]["start_ns"] == 12_000_000_000 and runs[-1]["fraction"] == 1.0
    # Through the API: Progress objects, numbered runs, the same result.
    got = []
    plain = api.execute(spec)
    with ssdlab.observe(got.append):
        observed = ssdlab.execute(spec)
    assert observed.core == plain.core
    assert got and all(isinstance(p, ssdlab.Progress) and p.run == got[0].run for p in got)
    assert got[-1].phase == "drain" and got[-2].requests == sum(
        j["read"]["total_ios"] + j["write"]["total_ios"] for j in plain.to_fio_json()["jobs"])


def test_an_exception_in_the_callback_ends_the_run_and_propagates():
    calls = []

    def stop(p):
        calls.append(p)
        if p.phase == "run":
            raise RuntimeError("enough")

    t = time.monotonic()
    with pytest.raises(RuntimeError, match="enough"):
        ssdlab.run(LONG_JOB, profile="samsung-850-pro", progress=stop)
    assert time.monotonic() - t < 5 and calls[-1].phase == "run"

    def wrong(p):
        raise ValueError("the callback's own")

    with pytest.raises(ValueError, match="the callback's own") as caught:
        ssdlab.run(LONG_JOB, profile="samsung-850-pro", progress=wrong)
    assert not isinstance(caught.value, api.SimulationError), "not mistaken for a core error"
    # The observer set by observe() is no longer there after its block.
    with ssdlab.observe(stop):
        pass
    assert api._observer.get() is None


def test_an_output_file_is_written_whole_or_not_at_all(tmp_path, monkeypatch):
    from ssdlab.cli.common import write_whole

    out = tmp_path / "x.json"
    out.write_text("the last complete report\n")
    real_fdopen = os.fdopen

    class Interrupted:
        """A file that takes a few bytes, then meets Ctrl-C."""

        def __init__(self, f):
            self.f = f

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.f.close()

        def write(self, text):
            self.f.write(text[:10])
            raise KeyboardInterrupt

    monkeypatch.setattr(os, "fdopen", lambda fd, mode: Interrupted(real_fdopen(fd, mode)))
    with pytest.raises(KeyboardInterrupt):
        write_whole(out, "a new report\n" * 1000)
    assert out.read_text() == "the last complete report\n"
    assert [f.name for f in tmp_path.iterdir()] == ["x.json"], "no partial temporary file either"
    monkeypatch.undo()
    write_whole(out, "a new report\n")
    new = tmp_path / "new.json"
    write_whole(new, "{}\n")
    assert out.read_text() == "a new report\n" and new.read_text() == "{}\n"
    assert sorted(f.name for f in tmp_path.iterdir()) == ["new.json", "x.json"]
    umask = os.umask(0)
    os.umask(umask)
    assert new.stat().st_mode & 0o777 == 0o666 & ~umask


def test_simulated_time_and_its_total_are_shown_in_one_unit():
    from ssdlab.progress import describe

    def at(now_s: float, end_s: float) -> str:
        p = api.Progress(run=1, phase="run", start_ns=0, now_ns=int(now_s * 1e9), end_ns=int(end_s * 1e9),
                         planned_bytes=None, requests=0, bytes=0, events=0, fraction=None, rebuild_bytes=None,
                         rebuild_target_bytes=None, device=None, fill=None, passes_done=None, passes=None)
        return describe(p).split(",")[0]

    # 67.4 s of a 10-minute run once read "sim 67.4/10.0 min"
    assert at(67.4, 600) == "sim 1.1/10.0 min"
    assert at(3.2, 60) == "sim 3.2/60.0 s"
    assert at(0.5, 5) == "sim 0.50/5.00 s"
    assert at(5400, 36000) == "sim 1.50/10.00 h"


def test_time_left_counts_down_steadily_while_the_rate_wobbles():
    from ssdlab.progress import TimeLeft

    # A phase whose rate alternates between fast and slow stretches: the mean-rate estimate
    # at each update, and the figure shown.
    t, wall = TimeLeft(), 0.0
    done = 0.0
    shown = []
    for k in range(1, 41):
        wall += 1.0
        done += 0.01 if k % 4 in (1, 2) else 0.04  # four-second cycles: slow, slow, fast, fast
        shown.append(t.update(done, wall))
    steps = [b - a for a, b in zip(shown, shown[1:])]
    assert max(steps) < 0.5, steps  # never jumps up by more than half a second a second
    assert shown[-1] < 0.5 * shown[3]  # and it comes down
    assert t.update(None, wall + 1) == shown[-1]  # nothing known: the last figure stays
    assert TimeLeft().update(0.0, 1.0) is None
