"""filebench's end-of-run summary (1.5-alpha3's layout) from fabricated per-op statistics."""

import re

import pytest

from ssdlab.filebench import flowop_stats, load, summary

MS = 1_000_000

TWO_FLOWOPS = """
define fileset name=s,path=/d,size=4k,entries=100,dirwidth=1000,prealloc=100
define process name=p,instances=2
{
  thread name=t,instances=1
  {
    flowop createfile name=createfile1,filesetname=s,fd=1
    flowop closefile name=closefile1,fd=1
  }
}
run 300
"""


def op(ops, lat_ms, max_ms, nbytes=0, **kw):
    return {"ops": ops, "bytes": nbytes, "errors": 0, "latency_ns": int(lat_ms * MS), "max_latency_ns": int(max_ms * MS),
            **kw}


def test_the_layout_of_filebench_1_5_alpha3():
    # the shape of filebench issue #96's first report: create and close, no reads or writes
    w = load(TWO_FLOWOPS)
    per_instance = [[op(6902, 6902 * 347.6, 5261.88), op(6902, 6902 * 0.01, 0.38)],
                    [op(6902, 6902 * 347.6, 5000.0), op(6902, 6902 * 0.01, 0.2)]]
    text = summary(w, [per_instance], 300.0, clock_s=312.038)
    assert text == (
        "312.038: Run took 300 seconds...\n"
        "312.038: Per-Operation Breakdown\n"
        "closefile1           13804ops       46ops/s   0.0mb/s      0.0ms/op [0.00ms -  0.38ms]\n"
        "createfile1          13804ops       46ops/s   0.0mb/s    347.6ms/op [0.00ms - 5261.88ms]\n"
        "312.038: IO Summary: 27608 ops 92.027 ops/s 0/0 rd/wr   0.0mb/s   0.0ms/op\n")


def test_reads_writes_bytes_and_the_io_summary():
    w = load("fileserver")
    t = w.threads[0]
    names = [f.name for f in t.flowops]
    per = []
    for i, o in enumerate(t.ops):
        n = 1000
        nbytes = 128 * 1024 * n if o["op"] in ("read_whole", "write_whole") else (8 * 1024 * n if o["op"] == "append" else 0)
        per.append(op(n, n * (i + 1), 10 * (i + 1), nbytes, min_latency_ns=(i + 1) * 1000))
    text = summary(w, [per], 10.0)
    lines = text.splitlines()
    # reverse order of definition, as filebench lists its flowops
    assert [ln.split()[0] for ln in lines[2:-1]] == list(reversed(names))
    readfile = next(ln for ln in lines if ln.startswith("readfile1"))
    assert readfile == "readfile1            1000ops      100ops/s  12.5mb/s      8.0ms/op [0.01ms - 80.00ms]"
    # 11 I/O flowops of 1000 ops; reads: readfile1; writes: wrtfile1, appendfilerand1
    io = lines[-1]
    assert io.startswith("10.000: IO Summary: 11000 ops 1100.000 ops/s 100/200 rd/wr  25.8mb/s ")
    # 1.5-alpha3: the latency of all I/O flowops over the reads and writes alone
    total_ms = sum(1000 * (i + 1) for i in range(11))
    assert io.endswith(f"{total_ms / 3000:5.1f}ms/op")


def test_instances_given_one_by_one_add_up():
    w = load(TWO_FLOWOPS)
    one = [op(10, 10, 2), op(10, 1, 0.5)]
    by_definition = summary(w, [[one, one]], 1.0)
    by_instance = summary(w, [one, one], 1.0)  # one entry per instance (2 process instances)
    assert by_definition == by_instance
    assert "createfile1          20ops" in by_definition


def test_an_instance_that_never_ran_a_flowop_makes_its_minimum_zero():
    w = load(TWO_FLOWOPS)
    ran = [op(5, 5, 2, min_latency_ns=MS // 2), op(5, 5, 2, min_latency_ns=MS // 4)]
    idle = [op(0, 0, 0), op(0, 0, 0)]
    stats = {s.name: s for s in flowop_stats(w, [[ran, ran]])}
    assert stats["createfile1"].min_latency_ns == MS // 2
    stats = {s.name: s for s in flowop_stats(w, [[ran, idle]])}
    assert stats["createfile1"].min_latency_ns == 0


def test_flowops_not_run_show_zero_and_helpers_join_their_flowop():
    w = load("oltp")
    per = []
    for t in w.threads:
        per.append([op(10, 10, 3, 2048 * 10 if o["op"] in ("read", "write") else 0) for o in t.ops])
    text = summary(w, per, 1.0)
    assert re.search(r"^shadow-post-lg\s+0ops\s+0ops/s\s+0\.0mb/s\s+0\.0ms/op \[0\.00ms -  0\.00ms\]$", text, re.M)
    # lg-write: its open (10 ops) and its write (10 ops) count; the fsync of dsync adds time only
    lg = next(ln for ln in text.splitlines() if ln.startswith("lg-write"))
    assert lg.split()[1] == "20ops"
    assert "1.5ms/op" in lg  # (10+10+10 ms) / 20 ops


def test_flowops_of_one_name_count_in_the_last_defined():
    w = load("""
define fileset name=s,path=/d,size=4k,entries=10,dirwidth=100
define process name=a { thread name=t { flowop delay name=same,value=0 } }
define process name=b { thread name=t { flowop delay name=same,value=0 } }
""")
    text = summary(w, [[op(3, 3, 1)], [op(4, 4, 1)]], 1.0)
    lines = text.splitlines()[2:-1]
    assert lines[0].startswith("same                 7ops")
    assert lines[1].startswith("same                 0ops")


@pytest.mark.parametrize("bad, message", [
    ([], "expected 1 thread summaries"),
    ([[{"ops": 1}]], "1 op summaries for its 2 ops"),
    ([[op(1, 1, 1), {"ops": -1}]], "ops must be a whole number"),
])
def test_summaries_that_do_not_fit_are_refused(bad, message):
    w = load(TWO_FLOWOPS)
    with pytest.raises(ValueError, match=message):
        summary(w, bad, 1.0)


def test_elapsed_must_be_positive():
    with pytest.raises(ValueError):
        summary(load(TWO_FLOWOPS), [[op(1, 1, 1), op(1, 1, 1)]], 0)
