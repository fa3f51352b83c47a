"""Reading filebench's Workload Model Language: grammar, values, variables, and what is
modelled, warned about or refused (each with its file and line)."""

import pytest

from ssdlab.filebench import FilebenchError, load, to_core
from ssdlab.filebench.gammatail import cap_multiple, upper_regularized_gamma
from ssdlab.filebench.lexer import tokenize

SET = "define fileset name=s,path=/data,size=4k,entries=100,dirwidth=1000,prealloc=50\n"


def thread(*flowops, attrs="", fileset=SET, tail=""):
    body = "\n".join(f"    flowop {f}" for f in flowops)
    return f"{fileset}define process name=p{attrs}\n{{\n  thread name=t\n  {{\n{body}\n  }}\n}}\n{tail}"


def core_ops(text, **kw):
    return to_core(load(text, name="w.f", **kw))["threads"][0]["files"]["program"]["ops"]


def error(text, **kw):
    with pytest.raises(FilebenchError) as e:
        load(text, name="w.f", **kw)
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith("w.f")
    return msg


# ---- tokens and values ----------------------------------------------------------------------

def test_numbers_take_filebenchs_lower_case_suffixes():
    toks = tokenize("set $a=12 $b=4k 3m 2g -5 /x/y.z name")
    assert [t.value for t in toks if t.kind == "int"] == [12, 4096, 3 * 1024**2, 2 * 1024**3, -5]
    assert [t.kind for t in toks][:3] == ["word", "var", "="]


@pytest.mark.parametrize("text", ["set $x=4K\n", "set $x=1.5\n", "set $x=16kb\n"])
def test_numbers_filebench_does_not_read_are_refused(text):
    assert "whole numbers" in error(text)


def test_numbers_beyond_strtoll_are_refused():
    assert "out of range" in error("set $x=9999999999g\n")
    assert load("set $x=8589934591g\n").variables["x"] == 8589934591 * 1024**3


def test_comments_line_breaks_and_continued_attributes():
    text = thread("read name=r,filesetname=s,  # the read\n        iosize=2k,\n        random")
    assert core_ops(text)[-1] == {"op": "read", "io_bytes": 2048, "random": True}


def test_variables_bind_at_the_run_not_where_they_are_used():
    text = ("set $n=10\ndefine fileset name=s,path=$dir,size=$sz,entries=$n,dirwidth=20\n"
            "set $dir=/mnt\nset $sz=1m\nset $n=40\n"
            "define process name=p { thread name=t,instances=$k { flowop statfile name=st,filesetname=s } }\n"
            "set $k=3\nrun $secs\nset $secs=5\n")
    # $secs is set after the run: never read (filebench ends with its run)
    assert "variable $secs is not set" in error(text)
    w = load(text.replace("run $secs\nset $secs=5\n", "set $secs=5\nrun $secs\n"))
    core = to_core(w)
    assert core["file_sets"][0]["dir"] == "/mnt/s"
    assert core["file_sets"][0]["entries"] == 40
    assert core["file_sets"][0]["size"]["mean"] == 1024**2
    assert core["threads"][0]["instances"] == 3 and core["run_seconds"] == 5.0


def test_braces_and_quoted_values():
    text = ('set $d="/my data"\ndefine fileset name="s",path=${d},size=1k,entries=1,dirwidth=1\n'
            'define process name=p { thread name=t { flowop statfile name="st",filesetname=s } }\n')
    core = to_core(load(text))
    assert core["file_sets"][0]["dir"] == "/my data/s"


# ---- file sets -------------------------------------------------------------------------------

def test_sizes_are_filebenchs_gamma_around_size():
    fs = to_core(load(thread("statfile name=x,filesetname=s")))["file_sets"][0]
    assert fs["size"] == {"kind": "gamma", "mean": 4096, "shape": 1.5, "max": 4096 * 11}
    assert fs["prealloc"] == 0.5 and fs["dir_width"] == 0 and fs["dir"] == "/data/s"


def test_the_gamma_cut_leaves_at_most_one_in_a_million():
    # shape 1.5: Q(1.5, x) = erfc(sqrt x) + 2 sqrt(x / pi) e^-x
    import math
    for x in (0.3, 2.0, 16.5):
        exact = math.erfc(math.sqrt(x)) + 2 * math.sqrt(x / math.pi) * math.exp(-x)
        assert upper_regularized_gamma(1.5, x) == pytest.approx(exact, rel=1e-9)
    k = cap_multiple(1.5)
    assert upper_regularized_gamma(1.5, k * 1.5) <= 1e-6 < upper_regularized_gamma(1.5, (k - 1) * 1.5)
    assert upper_regularized_gamma(1.0, 3.0) == pytest.approx(math.exp(-3.0))


@pytest.mark.parametrize("attrs, size", [
    ("size=8k,filesizegamma=0", {"kind": "fixed", "bytes": 8192}),
    ("size=8k,filesizegamma=500", {"kind": "gamma", "mean": 8192, "shape": 0.5, "max": 8192 * cap_multiple(0.5)}),
    ("size=$c", {"kind": "gamma", "mean": 131072, "shape": 1.5, "max": 131072 * 11}),
    ("size=$u", {"kind": "uniform", "min": 1024, "max": 4096, "align": 1}),
    ("size=$r", {"kind": "gamma", "mean": 2048, "shape": 2.0, "max": 2048 * cap_multiple(2.0)}),
    ("", {"kind": "gamma", "mean": 1024, "shape": 1.5, "max": 1024 * 11}),
])
def test_size_forms(attrs, size):
    pre = ("set $c=cvar(type=cvar-gamma,parameters=mean:131072;gamma:1.5)\n"
           "set $u=cvar(type=cvar-uniform,parameters=lower:1024;upper:4096)\n"
           "set $r=randvar(type=gamma,mean=2k,gamma=2000)\n")
    text = pre + thread("statfile name=x,filesetname=s",
                        fileset=f"define fileset name=s,path=/d,entries=5,dirwidth=10{',' if attrs else ''}{attrs}\n")
    assert to_core(load(text))["file_sets"][0]["size"] == size


def test_plain_sizes_can_be_read_as_filebench_1_5_does():
    fs = to_core(load(thread("statfile name=x,filesetname=s"), plain_size="fixed"))["file_sets"][0]
    assert fs["size"] == {"kind": "fixed", "bytes": 4096}


def test_define_file_is_one_file_of_fixed_size_in_its_path():
    text = thread("read name=r,filesetname=big,iosize=1m",
                  fileset="define file name=big,path=/data,size=5g,prealloc,reuse\n")
    w = load(text, name="w.f")
    fs = to_core(w)["file_sets"][0]
    assert fs == {"name": "big", "target": 0, "dir": "/data", "entries": 1,
                  "size": {"kind": "fixed", "bytes": 5 * 1024**3}, "dir_width": 0, "prealloc": 1.0}
    assert any(x.startswith("w.f:1: file big: reuse:") for x in w.warnings)


def test_a_deep_tree_is_flattened_with_a_warning():
    w = load(thread("statfile name=x,filesetname=s",
                    fileset="define fileset name=s,path=/d,entries=10000,dirwidth=20\n"), name="w.f")
    assert to_core(w)["file_sets"][0]["dir_width"] == 20
    assert any(x.startswith("w.f:1: fileset s: filebench spreads its 10000 files over a tree about 3.1 levels")
               for x in w.warnings)


@pytest.mark.parametrize("fileset, message", [
    ("define fileset name=s,path=/d,dirwidth=10\n", "w.f:1: fileset s: entries= is required"),
    ("define fileset name=s,path=/d,entries=10\n", "w.f:1: fileset s: dirwidth= is required"),
    ("define fileset path=/d,entries=10,dirwidth=1\n", "w.f:1: define fileset: name= is required"),
    ("define fileset name=s,entries=10,dirwidth=1\n", "w.f:1: fileset s: path= is required"),
    ("define fileset name=s,path=/d,entries=10,dirwidth=1,prealloc=150\n", "prealloc=150: expected a percentage"),
    ("define fileset name=s,path=/d,entries=10,dirwidth=1,leafdirs=5\n", "leafdirs"),
    ("define fileset name=s,path=/d,entries=10,dirwidth=1,color=red\n", "w.f:1: unknown attribute 'color' of a fileset"),
    ("define fileset name=s,path=/d,entries=10,dirwidth=1,size=$x\nset $x=cvar(type=cvar-weibull)\n",
     "cvar type 'cvar-weibull' is not modelled"),
    ("define fileset name=s,path=/d,entries=0,dirwidth=1\n", "entries: 0 is below 1"),
])
def test_file_set_errors(fileset, message):
    assert message in error(thread("statfile name=x,filesetname=s", fileset=fileset))


# ---- flowops ---------------------------------------------------------------------------------

def test_the_io_flowops():
    ops = core_ops(thread("openfile name=o,filesetname=s,fd=1", "read name=r,fd=1,iosize=4k",
                          "read name=rr,fd=1,iosize=4k,random", "write name=w,fd=1,iosize=8k,random",
                          "appendfile name=a,fd=1,iosize=1k", "fsync name=f,fd=1", "closefile name=c,fd=1",
                          "deletefile name=d,filesetname=s", "statfile name=st,filesetname=s",
                          "createfile name=cr,filesetname=s", "writewholefile name=ww,iosize=64k",
                          "readwholefile name=rw", "closefile name=c2", "delay name=z,value=2"))
    assert ops == [
        {"op": "open", "set": 0, "pick": {"kind": "random"}},
        {"op": "read", "io_bytes": 4096, "random": False},
        {"op": "read", "io_bytes": 4096, "random": True},
        {"op": "write", "io_bytes": 8192, "random": True},
        {"op": "append", "size": {"kind": "fixed", "bytes": 1024}, "io_bytes": 1024},
        {"op": "fsync", "data_only": False},
        {"op": "close"},
        {"op": "delete", "set": 0, "pick": {"kind": "random"}},
        {"op": "stat", "set": 0, "pick": {"kind": "random"}},
        {"op": "create", "set": 0, "pick": {"kind": "random"}},
        {"op": "write_whole", "io_bytes": 65536},
        {"op": "read_whole", "io_bytes": 4096 * 11},  # iosize 0: the whole file in one call
        {"op": "close"},
        {"op": "delay", "ns": 2_000_000_000, "busy": False},
    ]


def test_iters_unroll_and_dsync_adds_an_fsync_after_each_write():
    w = load(thread("write name=w,filesetname=s,iosize=1k,dsync,iters=3"), name="w.f")
    ops = to_core(w)["threads"][0]["files"]["program"]["ops"]
    assert [o["op"] for o in ops] == ["open", "write", "fsync", "write", "fsync", "write", "fsync"]
    assert w.threads[0].op_flowop == [(0, True), (0, True), (0, False)] * 1 + [(0, True), (0, False)] * 2


def test_directio_makes_the_thread_direct():
    core = to_core(load(thread("read name=r,filesetname=s,iosize=4k,directio")))
    assert core["threads"][0]["files"]["direct"] is True
    w = load(thread("read name=r,filesetname=s,iosize=4k,directio,fd=1",
                    "read name=r2,filesetname=s,iosize=4k,fd=2"), name="w.f")
    assert to_core(w)["threads"][0]["files"]["direct"] is True
    assert any("directio on some of its files only" in x for x in w.warnings)


def test_fsyncset_syncs_the_open_file_of_its_set():
    ops = core_ops(thread("createfile name=c,filesetname=s", "fsyncset name=fs,filesetname=s",
                          "closefile name=cl", "fsyncset name=fs2,filesetname=s"))
    assert [o["op"] for o in ops] == ["create", "fsync", "close"]


def test_hog_and_delay():
    w = load(thread("hog name=h,value=5000", "delay name=d,value=1"), name="w.f")
    ops = to_core(w)["threads"][0]["files"]["program"]["ops"]
    assert ops == [{"op": "delay", "ns": 5000, "busy": True}, {"op": "delay", "ns": 10**9, "busy": False}]


def test_finishoncount_becomes_loops():
    text = thread("statfile name=x,filesetname=s", "finishoncount name=f,value=1000",
                  attrs=",instances=4")
    w = load(text, name="w.f")
    assert to_core(w)["threads"][0]["files"]["program"]["loops"] == 250
    assert any("finishoncount value=1000: every thread runs its flowops 250 times" in x for x in w.warnings)
    # bytes: statfile moves none, reads move 4k each
    text = thread("read name=r,filesetname=s,iosize=4k", "finishonbytes name=f,value=40960")
    assert to_core(load(text))["threads"][0]["files"]["program"]["loops"] == 10


@pytest.mark.parametrize("flowops, warned", [
    (["semblock name=b,value=10", "statfile name=x,filesetname=s"], "w.f:6: semblock b: synchronisation between threads"),
    (["sempost name=b,value=1,target=x,blocking", "statfile name=x,filesetname=s"], "w.f:6: sempost b"),
    (["opslimit name=l", "statfile name=x,filesetname=s"], "w.f:6: opslimit l: no effect without an eventgen rate"),
    (["eventlimit name=l", "statfile name=x,filesetname=s"], "w.f:6: eventlimit l: no effect"),
    (["aiowrite name=a,filesetname=s,iosize=4k", "aiowait name=w"], "w.f:7: aiowait w: asynchronous I/O"),
    (["listdir name=l,filesetname=s"], "w.f:6: listdir l: filebench lists one directory"),
    (["read name=r,filesetname=s,iosize=4k,workingset=1m"], "w.f:6: read r: workingset"),
    (["read name=r,filesetname=s,iosize=4k,noreadahead"], "w.f:6: read r: noreadahead"),
    (["read name=r,filesetname=s,iosize=4k,opennext"], "each call on the next file (opennext)"),
    # filebench's openfile with opennext opens a file on a new fd each call, closing none
    (["openfile name=o,filesetname=s,opennext", "closefile name=c"], "w.f:6: openfile o: opennext: "),
    (["print name=p", "statfile name=x,filesetname=s"], "w.f:6: print p: prints only"),
])
def test_constructs_not_modelled_warn_with_file_and_line(flowops, warned):
    w = load(thread(*flowops), name="w.f")
    assert any(warned in x for x in w.warnings), w.warnings


@pytest.mark.parametrize("flowops, message", [
    (["frobnicate name=x"], "w.f:6: unknown flowop 'frobnicate'"),
    (["read name=x,filesetname=s,iosize=4k,colour=red"], "w.f:6: unknown attribute 'colour' of flowop read"),
    (["statfile filesetname=s"], "w.f:6: flowop statfile specifies no name"),
    (["makedir name=m,filesetname=s"], "w.f:6: makedir m: directories made and removed"),
    (["removedir name=m,filesetname=s"], "w.f:6: removedir m"),
    (["read name=r,iosize=4k"], "w.f:6: read r: fd 0 is not open and no filesetname="),
    (["read name=r,filesetname=s"], "w.f:6: read r: iosize= is required"),
    (["read name=r,filesetname=nope,iosize=1k"], "w.f:6: flowop read: fileset 'nope' is not defined"),
    (["closefile name=c,fd=2"], "w.f:6: closefile c: fd 2 is not open"),
    (["fsync name=f"], "w.f:6: fsync f: fd 0 is not open"),
    (["openfile name=o,filesetname=s", "openfile name=o2,filesetname=s"], "w.f:7: openfile o2: fd 0 is still open"),
    (["openfile name=o,filesetname=s,indexed=3"], "w.f:6: openfile o: indexed="),
    (["read name=r,filesetname=s,iosize=$big,random"], "variable $big is not set"),
    (["openfile name=a,filesetname=s,fd=1", "openfile name=b,filesetname=s,fd=2", "read name=r,fd=1,iosize=1k"],
     "w.f:8: read r: works on fd 1, left open when b opened another file"),
    (["semblock name=b"], "none of its flowops is one the core runs"),
])
def test_what_changes_the_meaning_is_an_error_at_its_line(flowops, message):
    assert message in error(thread(*flowops))


def test_random_reads_larger_than_fixed_files_are_refused():
    text = thread("read name=r,filesetname=s,iosize=8k,random",
                  fileset="define file name=s,path=/d,size=4k\n")
    assert "iosize 8192 is larger than the files of s" in error(text)


def test_rate_limits_under_an_event_rate_are_refused():
    text = "eventgen rate=100\n" + thread("statfile name=x,filesetname=s", "opslimit name=l")
    assert "w.f:8: opslimit l: rate limits (eventgen rate 100) are not modelled" in error(text)


# ---- commands ----------------------------------------------------------------------------------

def test_run_forms():
    base = thread("statfile name=x,filesetname=s")
    assert load(base).run_seconds is None  # the file does not say
    assert load(base + "run 30\n").run_seconds == 30.0
    assert load(base + "run\n").run_seconds == 60.0  # filebench's default in its timed mode
    w = load("set mode quit alldone\n" + base + "run\n")
    assert (w.run_seconds, w.quit) == (None, "alldone")
    w = load(base + "psrun -10 120\n", name="w.f")
    assert w.run_seconds == 120.0 and any("psrun" in x for x in w.warnings)


def test_commands_that_do_nothing_here():
    text = ('echo "starting $x"\nusage "set $dir"\nversion\ndebug 3\nenable lathist\ncreate files\n'
            'system "echo 3 > /proc/sys/vm/drop_caches"\nsleep 5\nset mode nousestats\n'
            + thread("statfile name=x,filesetname=s") + "run 10\nquit\n")
    w = load(text, name="w.f")
    assert w.run_seconds == 10.0
    assert w.messages[:2] == ["starting $x", "set $dir"]
    said = "\n".join(w.warnings)
    for what in ("w.f:5: enable lathist", "w.f:7: system", "w.f:8: sleep", "w.f:19: 'quit' after the run"):
        assert what in said, said


@pytest.mark.parametrize("text, message", [
    ("frob 1\n", "w.f:1: unknown command 'frob'"),
    ("define flowop name=x { flowop read name=r }\n", "w.f:1: define flowop: composite flowops"),
    ("define thread name=t\n", "w.f:1: define thread"),
    ("set $x\n", "w.f:1: expected '='"),
    ("define process name=p {\n", "w.f:1: expected 'thread' or '}', found the end of the file"),
    ("define process name=p { thread name=t { } }\n", "w.f:1: a thread needs at least one flowop"),
    ('echo "open\n', "w.f:1: unterminated quoted text"),
    ("set $x=1 @\n", "w.f:1: illegal character '@'"),
    ("load nosuch\n", "w.f:1: load nosuch: no such personality"),
    ("enable multi master=a,client=b\n", "multi-client"),
    ("set mode quit sometimes\n", "expected 'timeout' or 'alldone' or 'firstdone'"),
    # Nothing after '=': the next line's command or attribute was taken as the value, and the
    # error fell on the line after ("w.f:2: expected a command, found '$m'").
    ("set $n=\nset $m=1\n", "w.f:1: $n: expected a value after '=', found the end of the line"),
    ("define fileset name=s,entries=\ndirwidth=20\n", "w.f:1: entries: expected a value after '='"),
])
def test_command_errors(text, message):
    assert message in error(text)


def test_files_and_errors_name_the_file(tmp_path):
    p = tmp_path / "mine.f"
    p.write_text(thread("statfile name=x,filesetname=s") + "run 5\n")
    w = load(p)
    assert w.path == str(p) and w.run_seconds == 5.0
    assert load(str(p)).run_seconds == 5.0
    bad = tmp_path / "bad.f"
    bad.write_text("\n\nflowop\n")
    with pytest.raises(FilebenchError, match=rf"^{bad}:3: unknown command 'flowop'$"):
        load(bad)
    with pytest.raises(FilebenchError, match="cannot read workload file"):
        load(tmp_path / "missing.f")


def test_to_core_checks_its_target():
    w = load(thread("statfile name=x,filesetname=s"))
    with pytest.raises(ValueError):
        to_core(w, target_index=-1)
    assert to_core(w, target_index=3)["file_sets"][0]["target"] == 3


# ---- readonly, writeonly and dirgamma: parsed, so said or modelled -----------------------------

RO = "define fileset name=s,path=/data,size=4k,entries=100,dirwidth=1000,prealloc=100,readonly\n"
WO = "define fileset name=s,path=/data,size=4k,entries=100,dirwidth=1000,prealloc=100,writeonly\n"


@pytest.mark.parametrize(("fileset", "flowop", "expected"), [
    (RO, "write name=w1,filesetname=s,iosize=4k", "write w1: fileset s is readonly (filebench opens its files "
     "O_RDONLY): the write fails there"),
    (RO, "appendfile name=a1,filesetname=s,iosize=4k", "appendfile a1: fileset s is readonly"),
    (RO, "writewholefile name=ww,filesetname=s", "writewholefile ww: fileset s is readonly"),
    (WO, "readwholefile name=rw,filesetname=s", "readwholefile rw: fileset s is writeonly (filebench opens its "
     "files O_WRONLY): the read fails there"),
    (WO, "read name=r1,filesetname=s,iosize=4k", "read r1: fileset s is writeonly"),
])
def test_io_against_a_filesets_open_mode_is_refused_at_its_flowop(fileset, flowop, expected):
    # Ignored, the mode let a readonly set be written (filebench's write fails with EBADF and
    # its run stops); said, the flowop's line and what filebench would do.
    msg = error(thread("openfile name=o,filesetname=s", flowop, "closefile name=c", fileset=fileset))
    assert msg.startswith("w.f:7: "), msg
    assert expected in msg, msg


def test_a_filesets_open_mode_its_io_keeps_to_changes_nothing():
    for fileset, flowop in ((RO, "readwholefile name=r,filesetname=s"), (WO, "write name=w,filesetname=s,iosize=4k")):
        w = load(thread("openfile name=o,filesetname=s", flowop, "closefile name=c", fileset=fileset), name="w.f")
        assert not [x for x in w.warnings if "only" in x], w.warnings


def test_dirgamma_is_said_to_be_ignored():
    w = load(thread("statfile name=x,filesetname=s",
                    fileset="define fileset name=s,path=/d,entries=10000,dirwidth=20,dirgamma=0\n"), name="w.f")
    assert any(x.startswith("w.f:1: fileset s: dirgamma: the tree's depth is not modelled; ignored") for x in w.warnings), \
        w.warnings


def test_a_randvars_round_is_refused_as_a_cvars_is():
    # rand_gamma_get (fb_random.c) rounds each draw to a multiple of round=: sizes the
    # core's gamma does not give.
    msg = error("set $r=randvar(type=gamma,mean=2k,round=4k)\n"
                + thread("statfile name=x,filesetname=s",
                         fileset="define fileset name=s,path=/d,entries=5,dirwidth=10,size=$r\n"))
    assert msg.startswith("w.f:1: fileset s: size: randvar round= is not modelled"), msg


@pytest.mark.parametrize("attr", ["seed=7", "randsrc=rand48"])
def test_a_randvars_seed_and_source_are_said_to_be_ignored(attr):
    w = load(f"set $r=randvar(type=gamma,mean=2k,{attr})\n"
             + thread("statfile name=x,filesetname=s",
                      fileset="define fileset name=s,path=/d,entries=5,dirwidth=10,size=$r\n"), name="w.f")
    name = attr.split("=")[0]
    said = [x for x in w.warnings if f"randvar {name}" in x]
    assert said and said[0].startswith(f"w.f:1: fileset s: size: randvar {name}"), w.warnings
    assert "ssdlab's run seed" in said[0] and said[0].endswith("ignored"), said[0]
