"""Properties of the filebench reader: generated workloads written as WML read back as
written; random text never raises anything but the one-line FilebenchError."""

import string

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ssdlab.filebench import FilebenchError, load, to_core

NAME = st.from_regex(r"[a-z][a-z0-9_]{0,7}", fullmatch=True).filter(
    lambda s: s not in {"true", "false", "cvar", "randvar"})
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def size_text(n):
    for suffix, mult in (("g", 1024**3), ("m", 1024**2), ("k", 1024)):
        if n % mult == 0 and n >= mult:
            return f"{n // mult}{suffix}"
    return str(n)


@st.composite
def filesets(draw):
    names = draw(st.lists(NAME, min_size=1, max_size=3, unique=True))
    out = []
    for name in names:
        out.append({
            "name": name,
            "path": "/" + draw(st.from_regex(r"[a-z]{1,6}(/[a-z]{1,6}){0,2}", fullmatch=True)),
            "entries": draw(st.integers(1, 5000)),
            "size": draw(st.sampled_from([512, 4096, 16384, 131072, 1024**2, 3 * 1024**2])),
            "dirwidth": draw(st.integers(1, 200)),
            "prealloc": draw(st.one_of(st.none(), st.integers(0, 100))),
            "fixed": draw(st.booleans()),
        })
    return out


# blocks of flowops that are always valid on their own: (flowop lines, core ops they give)
def blocks(sets):
    s = st.sampled_from(sets)
    io = st.sampled_from([4096, 8192, 65536, 1024**2])
    return st.one_of(
        st.builds(lambda f, n, w: ([f"createfile name={{}},filesetname={f['name']},fd={n}",
                                   f"writewholefile name={{}},fd={n},iosize={size_text(w)}",
                                   f"closefile name={{}},fd={n}"], ["create", "write_whole", "close"]),
                  s, st.integers(1, 4), io),
        st.builds(lambda f, n, w, r: ([f"openfile name={{}},filesetname={f['name']},fd={n}",
                                      f"read name={{}},fd={n},iosize={size_text(w)}{',random' if r else ''}",
                                      f"appendfilerand name={{}},fd={n},iosize={size_text(w)}",
                                      f"fsync name={{}},fd={n}",
                                      f"closefile name={{}},fd={n}"],
                                     ["open", "read", "append", "fsync", "close"]),
                  s.filter(lambda f: f["fixed"] is False or f["size"] >= 1024**2), st.integers(1, 4), io,
                  st.booleans()),
        st.builds(lambda f: ([f"deletefile name={{}},filesetname={f['name']}"], ["delete"]), s),
        st.builds(lambda f: ([f"statfile name={{}},filesetname={f['name']}"], ["stat"]), s),
        st.builds(lambda v: ([f"delay name={{}},value={v}"], ["delay"]), st.integers(0, 3)),
    )


@st.composite
def workloads(draw):
    sets = draw(filesets())
    procs = []
    for pname in draw(st.lists(NAME, min_size=1, max_size=2, unique=True)):
        threads = []
        for tname in draw(st.lists(NAME, min_size=1, max_size=2, unique=True)):
            bl = draw(st.lists(blocks(sets), min_size=1, max_size=4))
            threads.append({"name": tname, "instances": draw(st.integers(1, 64)), "blocks": bl})
        procs.append({"name": pname, "instances": draw(st.integers(1, 4)), "threads": threads})
    run = draw(st.one_of(st.none(), st.integers(1, 3600)))
    use_vars = draw(st.booleans())
    sep = draw(st.sampled_from([",", ", ", ",\n    ", " ,  "]))
    return {"sets": sets, "procs": procs, "run": run, "vars": use_vars, "sep": sep}


def render(spec):
    lines = ["# generated", ""]
    sep = spec["sep"]
    for i, f in enumerate(spec["sets"]):
        size = size_text(f["size"])
        entries = str(f["entries"])
        if spec["vars"]:
            lines += [f"set $size{i}={size}", f"set $n{i}={entries}   # entries"]
            size, entries = f"$size{i}", f"$n{i}"
        attrs = [f"name={f['name']}", f"path={f['path']}", f"size={size}", f"entries={entries}",
                 f"dirwidth={f['dirwidth']}"]
        if f["prealloc"] is not None:
            attrs.append(f"prealloc={f['prealloc']}")
        if f["fixed"]:
            attrs.append("filesizegamma=0")
        lines.append("define fileset " + sep.join(attrs))
    k = 0
    for p in spec["procs"]:
        lines += [f"define process name={p['name']},instances={p['instances']}", "{"]
        for t in p["threads"]:
            lines += [f"  thread name={t['name']}{sep}instances={t['instances']}", "  {"]
            for flow, _ in t["blocks"]:
                for fl in flow:
                    k += 1
                    kind, rest = fl.split(" ", 1)
                    lines.append(f"    flowop {kind} " + rest.format(f"f{k}").replace(",", sep))
            lines += ["  }"]
        lines += ["}"]
    if spec["run"] is not None:
        lines.append(f"run {spec['run']}")
    return "\n".join(lines) + "\n"


@SETTINGS
@given(workloads())
def test_generated_workloads_read_back_as_written(spec):
    text = render(spec)
    w = load(text, name="gen.f")
    core = to_core(w)
    assert [f["name"] for f in core["file_sets"]] == [f["name"] for f in spec["sets"]]
    for got, want in zip(core["file_sets"], spec["sets"]):
        assert got["entries"] == want["entries"]
        assert got["dir"] == f"{want['path']}/{want['name']}"
        assert got["prealloc"] == (want["prealloc"] or 0) / 100
        assert got["dir_width"] == (want["dirwidth"] if want["dirwidth"] < want["entries"] else 0)
        if want["fixed"]:
            assert got["size"] == {"kind": "fixed", "bytes": want["size"]}
        else:
            assert (got["size"]["kind"], got["size"]["mean"], got["size"]["shape"]) == ("gamma", want["size"], 1.5)
    want_threads = [(f"{p['name']}.{t['name']}", p["instances"] * t["instances"], t)
                    for p in spec["procs"] for t in p["threads"]]
    assert [(t["name"], t["instances"]) for t in core["threads"]] == [(n, i) for n, i, _ in want_threads]
    k = 0
    for got, wt, (_, _, t) in zip(core["threads"], w.threads, want_threads):
        want_ops = [o for _, ops in t["blocks"] for o in ops]
        assert [o["op"] for o in got["files"]["program"]["ops"]] == want_ops
        n_flowops = sum(len(flow) for flow, _ in t["blocks"])
        assert [f.name for f in wt.flowops] == [f"f{k + j + 1}" for j in range(n_flowops)]
        k += n_flowops
        assert [fi for fi, _ in wt.op_flowop] == list(range(n_flowops))
    assert core["run_seconds"] == (float(spec["run"]) if spec["run"] is not None else None)


WML_WORDS = ["set", "define", "fileset", "file", "process", "thread", "flowop", "run", "psrun", "name=", "path=",
             "entries=", "size=", "dirwidth=", "prealloc", "instances=", "read", "write", "createfile", "openfile",
             "closefile", "iosize=", "fd=", "filesetname=", "$x", "$y", "=", ",", "{", "}", "(", ")", "cvar",
             "randvar", "type=", "gamma", "mode", "quit", "firstdone", "echo", '"hi"', "16k", "1m", "0", "-3",
             "eventgen", "rate=", "load", "fileserver", "\n", " ", "#c\n", "/tmp", "x", "s", "iters=", "dsync",
             "random", "opennext", "finishoncount", "value=", "semblock", "delay", "hog", "appendfilerand"]


@SETTINGS
@given(st.lists(st.sampled_from(WML_WORDS), max_size=60).map(lambda ws: " ".join(ws)))
def test_random_token_soup_gives_a_workload_or_one_line_error(text):
    _only_one_line_errors(text)


@SETTINGS
@given(st.text(alphabet=string.printable + "é€\x00\t", max_size=300))
def test_random_text_gives_a_workload_or_one_line_error(text):
    _only_one_line_errors(text)


def _only_one_line_errors(text):
    try:
        w = load(text, name="junk.f")
    except FilebenchError as e:
        msg = str(e)
        assert "\n" not in msg
        assert msg.startswith("junk.f") or "personalities" in msg
        return
    to_core(w)  # whatever reads also translates
