"""Every command, fed malformed input: each answers with exit status 2 and one line on stderr
that names the input, no traceback, and leaves no file behind (the commands run in an empty
directory, with every output they may write pointed into it)."""

from __future__ import annotations

import concurrent.futures as cf
import json
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

#: malformed inputs, by name: the file's content (None: the path is a directory; missing: no file)
_NOISE = bytes(random.Random(7).randrange(256) for _ in range(3000))
CORPUS: dict[str, bytes | None | str] = {
    "empty": b"",
    "noise": _NOISE,
    "latin1": "name = \"caf\xe9\"\n[j]\nrw=read\n".encode("latin-1"),
    "nul": b"[j]\x00\nrw=read\n",
    "deep-json": b"[" * 100_000 + b"]" * 100_000,
    "deep-toml": b"a = " + b"[" * 5000 + b"]" * 5000 + b"\n",
    "json-list": b"[1, 2]",
    "json-nan": json.dumps({"jobs": [{"jobname": "j", "read": {"iops": float("nan")}}]}).encode(),
    "json-cut": b'{"jobs": [{"jobname": "j", "read": {"iops": 1',
    "json-inf": b'{"jobs": [{"jobname": "j", "groupid": 1e999}]}',
    "json-nojobs": b'{"jobs": []}',
    "utf16": "[j]\nrw=read\n".encode("utf-16"),
    "toml-types": b"drive = 3\nhost = [1]\njob = 5\nname = 7\n",
    "toml-inf": b"x = inf\n[[drive]]\nname = \"sda\"\nprofile = \"samsung-850-pro\"\nscale = inf\n",
    "long-line": b"x" * 200_000 + b"\n",
    "a-directory": None,
    "missing": "missing",
}

#: each command, with where the malformed input goes ({}) and where its outputs go
COMMANDS: dict[str, list[str]] = {
    "run": ["run", "{}", "--output", "out.txt"],
    "run-profile": ["run", "--profile", "{}", "--output", "out.txt"],
    "run-system": ["run", "--system", "{}", "--output", "out.txt"],
    "run-engine": ["run", "--raid", "5", "--drives", "3", "--engine", "{}", "--output", "out.txt"],
    "run-host": ["run", "--host", "{}", "--output", "out.txt"],
    "replay-fio": ["replay", "{}", "--format", "fio"],
    "replay-disksim": ["replay", "{}", "--format", "disksim"],
    "replay-msr": ["replay", "{}", "--format", "msr"],
    "replay-snia": ["replay", "{}", "--format", "snia"],
    "replay-blkparse": ["replay", "{}", "--format", "blkparse"],
    "report": ["report", "{}", "-o", "report.html"],
    "compare": ["compare", "{}", "{}"],
    "fit": ["fit", "{}"],
    "sweep": ["sweep", "{}", "--out", "out.parquet"],
    "rebuild": ["rebuild", "--system", "{}"],
    "rebuild-job": ["rebuild", "--raid", "5", "--drives", "3", "--host-job", "{}"],
    "profiles-show": ["profiles", "show", "{}"],
    "size": ["size", "--target", "1GB/s", "--duration", "1h", "--profile", "{}"],
    "endurance": ["endurance", "--write-rate", "1GB/s", "--profile", "{}"],
    "measure": ["measure", "{}", "--target", "target.dat", "--output", "out.json"],
}

#: inputs a command may accept: these are not malformed for it
ACCEPTED = {
    # "[1, 2]" is a fio job file: a job named "1, 2" with fio's defaults
    ("run", "json-list"), ("rebuild-job", "json-list"), ("measure", "json-list"),
    # fio reads a job file line by line as C strings: a NUL ends the line
    ("measure", "nul"),
}


def _case(tmp_path: Path, command: str, name: str) -> str | None:
    """Run one command on one input; None if it answered as it should, else what was wrong."""
    work = tmp_path / f"{command}-{name}"
    work.mkdir()
    content = CORPUS[name]
    path = work / f"input-{name}.txt"
    if content is None:
        path.mkdir()
    elif isinstance(content, bytes):
        path.write_bytes(content)
    if command == "measure":
        (work / "target.dat").write_bytes(bytes(1 << 20))
    before = {p.name for p in work.iterdir()}
    args = [a.replace("{}", str(path)) for a in COMMANDS[command]]
    p = subprocess.run([sys.executable, "-m", "ssdlab", *args], cwd=work, capture_output=True, text=True,
                       errors="replace", timeout=600)
    problems = []
    if p.returncode != 2:
        problems.append(f"exit status {p.returncode}")
    lines = p.stderr.splitlines()
    if len(lines) != 1 or not lines[0].startswith("ssdlab: error: "):
        problems.append(f"stderr is not one error line: {p.stderr[-600:]!r}")
    elif path.name not in lines[0]:
        problems.append(f"the input is not named: {lines[0][:300]!r}")
    if "Traceback" in p.stderr:
        problems.append("a traceback")
    left = {p.name for p in work.iterdir()} - before
    if left:
        problems.append(f"left behind: {sorted(left)}")
    return f"{command} on {name}: {'; '.join(problems)}" if problems else None


@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_command_refuses_malformed_input_in_one_line(tmp_path, command):
    if command == "measure" and shutil.which("fio") is None:
        pytest.skip("needs fio")
    names = [n for n in CORPUS if (command, n) not in ACCEPTED]
    with cf.ThreadPoolExecutor(max_workers=3) as pool:
        found = [r for r in pool.map(lambda n: _case(tmp_path, command, n), names) if r is not None]
    assert not found, "\n".join(found)
