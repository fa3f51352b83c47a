"""The standard personalities shipped in ssdlab.filebench.personalities, each read into the
structure filebench's own workloads/*.f describe (their parameters, flowops and run)."""

import pytest

from ssdlab.filebench import PERSONALITIES, load, personality_path, to_core

KIB, MIB = 1024, 1024 * 1024


def ops_of(core, thread=0):
    return [o["op"] for o in core["threads"][thread]["files"]["program"]["ops"]]


def flowop_names(w, thread=0):
    return [(f.kind, f.name) for f in w.threads[thread].flowops]


def gamma(mean, shape=1.5):
    return {"kind": "gamma", "mean": mean, "shape": shape, "max": mean * 11}


@pytest.mark.parametrize("name", PERSONALITIES)
def test_every_personality_is_packaged_and_reads(name):
    assert personality_path(name).is_file()
    core = to_core(load(name))
    assert core["threads"] and core["file_sets"]
    assert load(personality_path(name)).threads[0].full_name == load(name).threads[0].full_name


def test_fileserver():
    w = load("fileserver")
    core = to_core(w)
    assert core["file_sets"] == [{"name": "bigfileset", "target": 0, "dir": "/tmp/bigfileset", "entries": 10000,
                                  "size": gamma(128 * KIB), "dir_width": 20, "prealloc": 0.8}]
    (t,) = core["threads"]
    assert (t["name"], t["instances"]) == ("filereader.filereaderthread", 50)
    assert core["run_seconds"] == 60.0 and core["quit"] == "timeout"
    assert ops_of(core) == ["create", "write_whole", "close", "open", "append", "close", "open", "read_whole",
                            "close", "delete", "stat"]
    prog = t["files"]["program"]["ops"]
    assert prog[1] == {"op": "write_whole", "io_bytes": MIB}
    assert prog[4] == {"op": "append", "size": {"kind": "uniform", "min": 1, "max": 16 * KIB - 1, "align": 1},
                       "io_bytes": 16 * KIB}
    assert prog[0] == {"op": "create", "set": 0, "pick": {"kind": "random"}}
    assert [n for _, n in flowop_names(w)] == ["createfile1", "wrtfile1", "closefile1", "openfile1",
                                               "appendfilerand1", "closefile2", "openfile2", "readfile1",
                                               "closefile3", "deletefile1", "statfile1"]
    assert t["files"]["direct"] is False and t["files"]["program"]["loops"] is None


def test_varmail():
    w = load("varmail")
    core = to_core(w)
    (fs,) = core["file_sets"]
    assert (fs["entries"], fs["size"], fs["prealloc"]) == (1000, gamma(16 * KIB), 0.8)
    assert fs["dir_width"] == 0  # dirwidth 1000000 > 1000 files: one directory
    assert core["threads"][0]["instances"] == 16
    assert ops_of(core) == ["delete", "create", "append", "fsync", "close", "open", "read_whole", "append", "fsync",
                            "close", "open", "read_whole", "close"]
    assert not any("varmail.f" in x and "tree" in x for x in w.warnings)


def test_webserver_log_append_opens_its_file():
    w = load("webserver")
    core = to_core(w)
    assert [f["name"] for f in core["file_sets"]] == ["bigfileset", "logfiles"]
    assert core["file_sets"][0]["prealloc"] == 1.0 and core["file_sets"][1]["prealloc"] == 1.0
    assert core["file_sets"][1]["entries"] == 1
    ops = core["threads"][0]["files"]["program"]["ops"]
    assert [o["op"] for o in ops[:30]] == ["open", "read_whole", "close"] * 10
    # appendlog (fd=2, filesetname=logfiles) opens the log itself: an open of set 1, then the append
    assert ops[30:] == [{"op": "open", "set": 1, "pick": {"kind": "random"}},
                        {"op": "append", "size": {"kind": "uniform", "min": 1, "max": 16 * KIB - 1, "align": 1},
                         "io_bytes": 16 * KIB}]
    assert core["threads"][0]["instances"] == 100
    # the open counts as one of appendlog's operations, as filebench counts it
    t = w.threads[0]
    assert t.op_flowop[30] == (30, True) and t.op_flowop[31] == (30, True)
    assert any("appendlog opens a file of logfiles itself" in x for x in w.warnings)


def test_webproxy_opslimit_is_a_no_op_without_eventgen():
    w = load("webproxy")
    core = to_core(w)
    assert core["file_sets"][0]["entries"] == 10000 and core["file_sets"][0]["size"] == gamma(16 * KIB)
    assert core["threads"][0]["name"] == "proxycache.proxycache"
    assert ops_of(core) == ["delete", "create", "append", "close"] + ["open", "read_whole", "close"] * 5
    assert flowop_names(w)[-1] == ("opslimit", "limit")
    assert any("opslimit limit: no effect without an eventgen rate" in x for x in w.warnings)


def test_oltp_as_far_as_it_fits():
    w = load("oltp")
    core = to_core(w)
    sets = {f["name"]: f for f in core["file_sets"]}
    assert sets["datafiles"]["size"] == {"kind": "fixed", "bytes": 10 * MIB}
    assert sets["datafiles"]["entries"] == 10 and sets["datafiles"]["prealloc"] == 1.0
    assert sets["logfile"]["entries"] == 1
    threads = {t["name"]: t for t in core["threads"]}
    assert {n: t["instances"] for n, t in threads.items()} == {"lgwr.lgwr": 1, "dbwr.dbwr": 10, "shadow.shadow": 200}
    lg = threads["lgwr.lgwr"]["files"]["program"]["ops"]
    # aiowrite ... dsync: an open of the log, a 256k random write, the fsync of O_SYNC
    assert lg == [{"op": "open", "set": 1, "pick": {"kind": "random"}},
                  {"op": "write", "io_bytes": 256 * KIB, "random": True},
                  {"op": "fsync", "data_only": False}]
    db = threads["dbwr.dbwr"]["files"]["program"]["ops"]
    assert len(db) == 100 * 3 + 1  # iters=100 of (open next file, write, fsync), then the hog
    assert db[-1] == {"op": "delay", "ns": 10000, "busy": True}
    sh = threads["shadow.shadow"]["files"]["program"]["ops"]
    assert sh == [{"op": "open", "set": 0, "pick": {"kind": "random"}},
                  {"op": "read", "io_bytes": 2 * KIB, "random": True},
                  {"op": "delay", "ns": 200000, "busy": True}]
    assert all(not t["files"]["direct"] for t in core["threads"])
    text = "\n".join(w.warnings)
    for said in ("semblock lg-block: synchronisation between threads is not modelled",
                 "sempost shadow-post-lg", "aiowait dbwr-aiowait: asynchronous I/O is not modelled",
                 "useism: shared memory not modelled", "eventlimit random-rate: no effect"):
        assert said in text
    # the fsync added for dsync joins the write's time but is not an operation of its own
    t = w.threads[0]
    assert t.op_flowop == [(0, True), (0, True), (0, False)]


def test_oltp_with_an_event_rate_is_refused():
    text = personality_path("oltp").read_text().replace("set $eventrate=0", "set $eventrate=100")
    with pytest.raises(ValueError, match=r"oltp\.f:\d+: eventlimit random-rate: rate limits"):
        load(text.replace("\n", "\n"), name="oltp.f")


def test_createfiles_runs_until_the_first_thread_is_done():
    core = to_core(load("createfiles"))
    assert core["quit"] == "firstdone" and core["run_seconds"] is None
    (fs,) = core["file_sets"]
    assert (fs["entries"], fs["prealloc"], fs["dir_width"]) == (50000, 0.0, 100)
    assert core["threads"][0]["instances"] == 16
    assert ops_of(core) == ["create", "write_whole", "close"]


def test_copyfiles_closes_the_source_before_creating_the_copy():
    w = load("copyfiles")
    core = to_core(w)
    assert core["quit"] == "firstdone"
    assert [f["name"] for f in core["file_sets"]] == ["bigfileset", "destfiles"]
    assert core["file_sets"][0]["prealloc"] == 1.0 and core["file_sets"][1]["prealloc"] == 0.0
    ops = core["threads"][0]["files"]["program"]["ops"]
    assert [(o["op"], o.get("set")) for o in ops] == [("open", 0), ("read_whole", None), ("close", None),
                                                        ("create", 1), ("write_whole", None), ("close", None)]
    t = w.threads[0]
    names = [f.name for f in t.flowops]
    # the early close is closefile1's
    assert [names[i] for i, _ in t.op_flowop] == ["openfile1", "readfile1", "closefile1", "createfile2",
                                                  "writefile2", "closefile2"]
    assert any("closefile closefile1 (fd 1) is issued before createfile createfile2" in x for x in w.warnings)


def test_variables_can_be_set_after_the_personality_is_loaded():
    w = load("load varmail\nset $nthreads=4\nset $meanfilesize=1m\nset $dir=/mnt/mail\nrun 30\n")
    core = to_core(w, target_index=2)
    assert core["threads"][0]["instances"] == 4
    assert core["file_sets"][0]["size"]["mean"] == MIB
    assert core["file_sets"][0]["dir"] == "/mnt/mail/bigfileset"
    assert core["file_sets"][0]["target"] == 2
    assert core["run_seconds"] == 30.0


def test_createfiles_ends_once_its_threads_find_no_file_left_to_create(tmp_path):
    # filebench's FILEBENCH_NORSC: a createfile with every file of the set made ends its
    # thread, and in createfiles' firstdone mode the run; every file is made once.
    from ssdlab import api
    from ssdlab.filework import load as load_work

    p = tmp_path / "cf.f"
    p.write_text("load createfiles\nset $nfiles=300\nset $nthreads=4\nset $meanfilesize=4k\nrun\n")
    core = api.execute(api.build(None, profile="samsung-850-pro", host="generic-linux", files=load_work(p))).core
    assert sum(j["file_ops"][0]["ops"] for j in core["jobs"]) == 300
    assert any(j.get("no_file_op") == 0 for j in core["jobs"])
    assert core["end_ns"] - core["start_ns"] < 10 ** 9


def test_a_timed_run_stopped_early_by_a_thread_without_a_file_says_so(tmp_path):
    # Under "set mode quit timeout" filebench stops the run and prints a warning naming the
    # flowop (flowop.c); the run ends there, not at its 60 s.
    from ssdlab import api
    from ssdlab.filereport import text
    from ssdlab.filework import load as load_work

    p = tmp_path / "cf.f"
    p.write_text("load createfiles\nset $nfiles=200\nset $nthreads=2\nset $meanfilesize=4k\n"
                 "set mode quit timeout\nrun 60\n")
    work = load_work(p)
    core = api.execute(api.build(None, profile="samsung-850-pro", host="generic-linux", files=work)).core
    assert core["end_ns"] - core["start_ns"] < 10 ** 9
    report = text(work, core, "generic-linux", ["sda"])
    assert "WARNING! Run stopped early: flowop createfile1 could not obtain a file" in report


def test_a_hog_burns_the_host_cpus_and_shares_them(tmp_path):
    # filebench's hog computes on a CPU: four threads hogging 1 ms a loop keep four of the
    # host's eight cores busy; sixteen keep all eight busy, and each loop then waits for a core.
    from ssdlab import api
    from ssdlab.filework import load as load_work

    def run(threads: int) -> dict:
        p = tmp_path / f"hog{threads}.f"
        p.write_text("define fileset name=s,path=/d,size=4k,entries=10,dirwidth=10,prealloc=100\n"
                     f"define process name=p,instances=1\n{{\n  thread name=t,instances={threads}\n  {{\n"
                     "    flowop hog name=h,value=1000000\n  }\n}\nrun 1\n")
        return api.execute(api.build(None, profile="samsung-850-pro", host="generic-linux", files=load_work(p))).core

    four, sixteen = run(4), run(16)
    assert four["files"]["cpu"]["busy"] == pytest.approx(0.5, abs=0.01)
    assert sixteen["files"]["cpu"]["busy"] == pytest.approx(1.0, abs=0.01)
    per_loop = [j["file_ops"][0]["latency_ns"] / j["file_ops"][0]["ops"] for j in sixteen["jobs"]]
    assert min(per_loop) > 1.9e6, "sixteen threads on eight cores: each 1 ms loop waits about as long for a core"
