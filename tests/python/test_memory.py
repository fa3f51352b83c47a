"""Memory: runs that would not fit are refused before anything large is allocated, with one
line naming the cause and the remedy; time series are bounded; the estimate is close to what
runs take. Limits are given explicitly so that the outcome does not depend on the machine."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import ssdlab
from ssdlab import api
from ssdlab.analysis import memory

REPO = Path(__file__).resolve().parents[2]
HUGE = "solidigm-d5-p5336-61.44tb"
FULL_RANDOM_4096 = "[j]\ndirect=1\nrw=randread\nbs=4k\nnumjobs=4096\n"  # size= defaults to the whole drive


#: the peak resident set of the process itself: VmHWM (ru_maxrss of a child starts from its
#: parent's resident set at fork, which under pytest is large)
PEAK = ("int(next(l for l in open('/proc/self/status') if l.startswith('VmHWM:')).split()[1]) * 1024")


def _child(code: str) -> dict:
    """Run ``code`` in a fresh interpreter; it sets ``out`` (a dict); returns it with the
    child's peak resident bytes as ``peak``."""
    src = f"import json\nout = {{}}\n{code}\nout['peak'] = {PEAK}\nprint(json.dumps(out))\n"
    # The child imports the ssdlab this process imported (the source tree has no compiled
    # core on a clean checkout; an installed package lives elsewhere).
    here = str(Path(ssdlab.__file__).resolve().parents[1])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (here, os.environ.get("PYTHONPATH")) if p))
    env.pop(memory.ENV_VAR, None)
    p = subprocess.run([sys.executable, "-c", src], capture_output=True, text=True, env=env, timeout=300)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout.strip().splitlines()[-1])


# ---- refusals ---------------------------------------------------------------------------------

def test_a_huge_drive_at_full_scale_is_refused_before_any_large_allocation():
    out = _child(
        "from ssdlab import api\n"
        "try:\n"
        f"    api.run(api.quickstart_job(), profile='{HUGE}', scale=1, memory_limit='16GiB')\n"
        "except ValueError as e:\n"
        "    out['error'] = str(e)\n")
    message = out.get("error", "")
    assert "\n" not in message and message.startswith("this run needs about")
    assert f"the flash map of /dev/nvme0n1 ({HUGE}" in message
    assert "--scale 0." in message and "--memory-limit" in message
    assert out["peak"] < 400 << 20  # the maps alone are ~32 GiB: nothing of them was allocated


def test_cli_refuses_the_d7_p5510_over_a_limit_in_one_line(cli):
    p = cli("run", "--profile", "intel-d7-p5510-3.84tb", "--memory-limit", "4GiB")
    assert p.returncode == 2
    lines = p.stderr.splitlines()
    assert len(lines) == 1, p.stderr
    assert lines[0].startswith("ssdlab: error: this run needs about")
    assert "flash map of /dev/nvme0n1 (intel-d7-p5510-3.84tb" in lines[0]
    assert "--scale 0.25" in lines[0] and "limit of 4.0GiB (--memory-limit)" in lines[0]
    assert p.stdout == ""


def test_an_interval_of_1us_on_a_1s_job_is_refused_with_the_smallest_interval():
    with pytest.raises(memory.MemoryLimitError) as e:
        api.build(api.quickstart_job(), overrides={"runtime": "1"}, interval="1us", memory_limit="none")
    assert str(e.value) == ("--interval 1us: a 1s run would take 1,000,001 time-series samples, more than "
                            "100,000; use --interval 20us or longer")
    # The smallest interval it names is accepted.
    api.build(api.quickstart_job(), overrides={"runtime": "1"}, interval="20us", memory_limit="none")


def test_a_run_that_its_size_bounds_is_refused_only_if_too_long_at_its_fastest():
    # 2 GB through a 6 Gb/s link takes at least ~3.6 s: at least 3.6 million samples at 1us.
    with pytest.raises(memory.MemoryLimitError, match=r"--interval 1us: a run of at least 3\.\d+s \(at the "
                                                      r"devices' fastest\) would take at least 3,\d{3},\d{3} "
                                                      r"time-series samples, more than 100,000; use --interval 50us"):
        api.build("[j]\ndirect=1\nrw=write\nbs=128k\nsize=2g\n", profile="samsung-850-pro", scale=0.01, interval="1us",
                  memory_limit="none")
    # 8 MiB of random reads on a disk: guessed at seconds (seeks), done at its cache's speed;
    # the guess (250,000 samples at 100us) does not refuse it.
    spec = api.build("[j]\ndirect=1\nrw=randread\nbs=4k\niodepth=4\nsize=8m\n", profile="seagate-exos-x18-18tb",
                     interval="100us", memory_limit="none")
    est = memory.estimate(spec.core)
    assert est.samples > memory.MAX_SAMPLES > est.min_samples


def test_cli_interval_refusal_is_one_line(cli):
    p = cli("run", "--set", "runtime=1", "--interval", "1us")
    assert p.returncode == 2
    assert p.stderr.startswith("ssdlab: error: --interval 1us:") and p.stderr.count("\n") == 1


def test_many_samples_within_the_memory_limit_name_the_interval():
    # 20,001 samples of a 4-drive RAID 5 (5 records each) under a 64 MiB limit.
    with pytest.raises(memory.MemoryLimitError) as e:
        api.build("[j]\ndirect=1\nrw=randread\nruntime=20\ntime_based\n", interval="1ms", memory_limit="64MiB",
                  system=ssdlab.raid("samsung-850-pro", 5, 4, scale=0.01))
    assert "time-series samples x 5 device records" in str(e.value)
    assert "use --interval" in str(e.value)


def test_4096_clones_of_full_drive_random_io_are_refused_naming_random_maps():
    with pytest.raises(memory.MemoryLimitError) as e:
        api.build(FULL_RANDOM_4096, memory_limit="16GiB")
    message = str(e.value)
    assert "the random maps of 4096 job clones" in message and "norandommap" in message
    # Without the maps it fits.
    api.build(FULL_RANDOM_4096 + "norandommap\n", memory_limit="16GiB")


def test_raising_the_limit_lets_a_small_run_through(monkeypatch):
    job = "[j]\ndirect=1\nrw=randread\nsize=1m\n"
    with pytest.raises(memory.MemoryLimitError, match=r"limit of 1\.0MiB \(--memory-limit\)"):
        api.run(job, profile="samsung-830-64gb", scale=0.01, memory_limit="1MiB")
    monkeypatch.setenv(memory.ENV_VAR, "1MiB")
    with pytest.raises(memory.MemoryLimitError, match=memory.ENV_VAR):
        api.run(job, profile="samsung-830-64gb", scale=0.01)
    r = api.run(job, profile="samsung-830-64gb", scale=0.01, memory_limit="1GiB")
    assert r.units[0].dirs["read"].bytes == 1 << 20
    monkeypatch.setenv(memory.ENV_VAR, "none")
    api.run(job, profile="samsung-830-64gb", scale=0.01)


def test_a_large_run_that_fits_says_so_in_a_warning():
    spec = api.build(api.quickstart_job(), profile="samsung-pm1725b-1.6tb", memory_limit="none")
    (w,) = [w for w in spec.warnings if "of memory" in w]
    assert "the flash map of /dev/nvme0n1 (samsung-pm1725b-1.6tb" in w and "--scale 0." in w
    small = api.build(api.quickstart_job(), profile="samsung-850-pro", memory_limit="none")
    assert not [w for w in small.warnings if "of memory" in w]


# ---- the limit --------------------------------------------------------------------------------

def test_limit_forms(monkeypatch):
    monkeypatch.delenv(memory.ENV_VAR, raising=False)
    monkeypatch.setattr(memory, "mem_available", lambda: 8 << 30)
    assert memory.memory_limit() == (6 << 30, "75% of the 8.0GiB available")
    assert memory.memory_limit("50%")[0] == 4 << 30
    assert memory.memory_limit("16GiB") == (16 << 30, "--memory-limit")
    assert memory.memory_limit(1000)[0] == 1000
    assert memory.memory_limit("none")[0] is None
    monkeypatch.setenv(memory.ENV_VAR, "2GiB")
    assert memory.memory_limit() == (2 << 30, memory.ENV_VAR)
    assert memory.memory_limit("3GiB")[0] == 3 << 30  # the option wins over the variable
    for bad in ("abc", "0", "-5%", "x%"):
        with pytest.raises(ValueError, match=f"^--memory-limit '{bad}': expected a"):
            memory.memory_limit(bad)
    # a share is of the memory available: more than all of it is no limit (150% was taken;
    # inf% and 1e400% were an OverflowError's traceback)
    for bad in ("150%", "100.5%", "inf%", "1e400%", "nan%", "0%"):
        with pytest.raises(ValueError, match=rf"^--memory-limit '{re.escape(bad)}': expected a share of the available "
                                             r"memory above 0% and at most 100%, like 90%$"):
            memory.memory_limit(bad)
    assert memory.memory_limit("100%")[0] == 8 << 30
    monkeypatch.setenv(memory.ENV_VAR, "150%")
    with pytest.raises(ValueError, match=rf"^{memory.ENV_VAR} '150%': expected a share"):
        memory.memory_limit()


def test_mem_available_reads_proc_meminfo():
    n = memory.mem_available()
    assert n is not None and n > 64 << 20


# ---- the estimate -----------------------------------------------------------------------------

def test_flash_map_term_is_the_cores_map_bytes():
    r = api.run("[j]\ndirect=1\nrw=read\nsize=1m\n", profile="samsung-850-pro", scale=0.01, memory_limit="none")
    dev = r.spec.core["targets"][0]["device"]
    n = dev["nand"]
    blocks = n["channels"] * n["dies_per_channel"] * n["blocks_per_plane"]
    # Not in map_bytes: the free-list entry and its tree (16 B) per block, the GC-candidate
    # trees per die, the write buffer.
    dies = n["channels"] * n["dies_per_channel"]
    extra = (blocks * (4 + 16) + dies * memory.victim_tree_bytes(dev)
             + dev["write_buffer_bytes"] // dev["ftl"]["iu_bytes"] * memory.BUFFERED_IU_BYTES)
    assert memory.ftl_bytes(dev) - extra == r.device["internal"]["nand"]["map_bytes"]


def test_run_length_and_samples_follow_the_jobs():
    spec = api.build("[global]\ndirect=1\n[a]\nrw=read\nruntime=2\ntime_based\n[b]\nstonewall\nrw=read\nruntime=3\ntime_based\n",
                     profile="samsung-850-pro", scale=0.01, interval="100ms", memory_limit="none")
    est = memory.estimate(spec.core)
    assert est.samples_exact and est.length_ns == 5_000_000_000 and est.samples == 51
    sized = api.build("[j]\ndirect=1\nrw=write\nbs=128k\nsize=1g\n", profile="samsung-850-pro", scale=0.01,
                      interval="100ms", memory_limit="none")
    est = memory.estimate(sized.core)
    assert not est.samples_exact and 0.5e9 < est.length_ns < 20e9  # 1 GB at ~0.5 GB/s


@pytest.mark.parametrize("args", [
    # FTL, random maps and jobs
    "api.quickstart_job(), profile='samsung-850-pro', scale=0.1, overrides={'runtime': '1'}",
    # the time series: 8,001 samples
    "'[j]\\ndirect=1\\nrw=randread\\nbs=4k\\niodepth=4\\nruntime=2\\ntime_based\\n', profile='samsung-850-pro', "
    "scale=0.01, interval='250us'",
])
def test_the_estimate_is_within_30_percent_of_the_measured_peak(args):
    # The baseline is the process's resident set just before the run (interpreter, imports,
    # the built spec), read in the same process: it varies by several MB between processes.
    out = _child("import os\nfrom ssdlab import api\nfrom ssdlab.analysis import memory\n"
                 f"spec = api.build({args}, memory_limit='none')\n"
                 "out['estimate'] = memory.estimate(spec.core).total\n"
                 "out['base'] = int(open('/proc/self/statm').read().split()[1]) * os.sysconf('SC_PAGE_SIZE')\n"
                 "api.execute(spec)\n")
    measured = out["peak"] - out["base"]
    assert measured > 20 << 20, out  # large enough to compare
    assert abs(out["estimate"] - measured) <= 0.3 * measured, (out, measured)


DEEP = "'[j]\\nrw={rw}\\nbs=4k\\nioengine=libaio\\ndirect=1\\niodepth={qd}\\nnumjobs=8\\nruntime=0.1\\ntime_based\\nnorandommap\\n'"


@pytest.mark.parametrize("args", [
    DEEP.format(rw="randread", qd=100_000) + ", profile='samsung-970-pro-512', scale=0.01",
    DEEP.format(rw="randwrite", qd=40_000) + ", system=ssdlab.raid('samsung-850-pro', 5, 4, chunk='64k', scale=0.01)",
    DEEP.format(rw="randread", qd=40_000) + ", system=ssdlab.raid('samsung-850-pro', 0, 4, chunk='64k', scale=0.01)",
])
def test_deep_queues_are_estimated_from_their_queued_ios(args):
    # 800,000 and 320,000 queued I/Os: the queue is most of the run's memory, and the estimate
    # must not be short of it (it was 40 % short: a host request only, 128 B per queued I/O).
    out = _child("import os\nimport ssdlab\nfrom ssdlab import api\nfrom ssdlab.analysis import memory\n"
                 f"spec = api.build({args}, memory_limit='none')\n"
                 "est = memory.estimate(spec.core)\n"
                 "out['estimate'] = est.total\n"
                 "out['queue'] = est.by_kind()['queue']\n"
                 "out['base'] = int(open('/proc/self/statm').read().split()[1]) * os.sysconf('SC_PAGE_SIZE')\n"
                 "api.execute(spec)\n")
    measured = out["peak"] - out["base"]
    assert out["queue"] > 0.8 * out["estimate"], out
    # Not short (the limit must hold), and not far over (an upper bound: containers grow by doubling).
    assert -0.05 * measured <= out["estimate"] - measured <= 0.45 * measured, (out, measured)


def test_an_array_names_its_drives_flash_maps_together():
    with pytest.raises(memory.MemoryLimitError) as e:
        api.build(api.quickstart_job(), system=ssdlab.raid("samsung-970-evo-plus-1tb", 5, 4), memory_limit="4GiB")
    assert ("the flash maps of 4 SSDs (/dev/nvme0n1, /dev/nvme1n1, /dev/nvme2n1, /dev/nvme3n1), 6.8GiB: "
            "simulate a fraction of the flash with --scale 0.25") in str(e.value)


def test_victim_trees_are_counted_as_the_core_builds_them():
    # victims.rs: leaves = the die's blocks rounded up to a power of two, 2 x leaves nodes.
    dev = {"nand": {"blocks_per_plane": 12233}, "ftl": {"iu_bytes": 16384}, "slc_cache": None}
    assert memory.victim_tree_bytes(dev) == 2 * 16384 * 8
    dev["nand"]["blocks_per_plane"] = 16384
    assert memory.victim_tree_bytes(dev) == 2 * 16384 * 8
    dev["nand"]["blocks_per_plane"] = 1
    assert memory.victim_tree_bytes(dev) == 2 * 8
    dev["nand"]["blocks_per_plane"] = 100
    dev["slc_cache"] = {"static_bytes": 1 << 20, "dynamic_max_bytes": 0}
    assert memory.victim_tree_bytes(dev) == 2 * 128 * (8 + 8)


# ---- runs on files ----------------------------------------------------------------------------

FILE_READ = "[j]\nrw=read\nbs=1m\nsize=3g\ndirect=0\n"
DISK = "seagate-barracuda-7200.11-1tb"


def _file_terms(mem: str) -> dict[str, memory.Term]:
    spec = api.build(FILE_READ, profile=DISK, filesystem="ext4", host_set={"mem": mem}, memory_limit="none")
    return {t.kind: t for t in memory.estimate(spec.core).terms}


def test_a_run_on_files_counts_its_page_cache_and_file_system():
    small, large = _file_terms("2GiB"), _file_terms("6GiB")
    # The cache is sized from the host's RAM less its reserve: 4 GiB more RAM, 4 GiB more cache.
    grown = large["page cache"].sim_bytes - small["page cache"].sim_bytes
    assert 26.7 * (1 << 20) <= grown <= 32 * (1 << 20), grown  # 1,048,576 pages of 26.7-32 bytes
    # The file system does not depend on the RAM: two bits and an index per 4 KiB block.
    fs = small["file system"]
    assert fs.sim_bytes == large["file system"].sim_bytes and fs.device == "sda"
    blocks = 1_000_204_886_016 // 4096
    assert 0.5 * blocks <= fs.sim_bytes <= 0.8 * blocks, fs.sim_bytes
    raw = api.build("[j]\nrw=read\nbs=1m\nsize=1g\ndirect=1\n", profile=DISK, memory_limit="none")
    assert not {"page cache", "file system"} & {t.kind for t in memory.estimate(raw.core).terms}


def test_a_run_on_files_stays_under_its_estimate():
    # The estimate is an upper bound: the block bitmaps are counted whole, and the pages of
    # them no allocation touched are never resident (the rest is within 10 %).
    out = _child("import os\nfrom ssdlab import api\nfrom ssdlab.analysis import memory\n"
                 f"spec = api.build({FILE_READ!r}, profile={DISK!r}, filesystem='ext4', "
                 "host_set={'mem': '4GiB'}, memory_limit='none')\n"
                 "out['estimate'] = memory.estimate(spec.core).total\n"
                 "out['base'] = int(open('/proc/self/statm').read().split()[1]) * os.sysconf('SC_PAGE_SIZE')\n"
                 "r = api.execute(spec)\n"
                 "out['cached'] = r.core['files']['cache_misses'] + r.core['files']['readahead_pages']\n")
    measured = out["peak"] - out["base"]
    bitmaps = 2 * 1_000_204_886_016 // 4096 // 8
    assert out["cached"] == 786_432, out  # 3 GiB read into a 3 GiB cache: the case estimated
    assert measured <= out["estimate"] <= measured + bitmaps + 0.1 * measured, (out, measured)


def test_a_huge_drive_filled_in_order_costs_only_the_pages_written():
    # The 61.44 TB drive at full size: its maps (29.7 GiB whole) are sparse.
    job = "[j]\nfilename=/dev/nvme0n1\ndirect=1\nrw={rw}\nbs=4k\nnumber_ios={n}\nnorandommap\n"

    def flash(rw, n, pre):
        spec = api.build(job.format(rw=rw, n=n), profile="solidigm-d5-p5336-61.44tb", scale=1,
                         precondition=pre, memory_limit="none")
        est = memory.estimate(spec.core)
        return sum(t.sim_bytes for t in est.terms if t.kind == "flash map")

    whole = flash("randread", 1000, "random:1")
    assert whole > 29 << 30
    seq = flash("randread", 1000, "sequential")
    assert seq < 128 << 20, "nothing of the maps is resident after a fill in order"
    # 50,000 random 4 KiB writes: a page of the L2P and two of the P2L each, nearly all distinct.
    written = flash("randwrite", 50_000, "sequential")
    assert 3 * 50_000 * 4096 * 0.95 < written - seq <= 3 * 50_000 * 4096
    assert flash("randwrite", 50_000, "none") == written


def test_sequential_writes_to_a_huge_drive_touch_its_maps_page_after_page():
    # A recorder on the full-size 61.44 TB drive: 10 s of 128 KiB writes in order touch a page
    # of the L2P per 1,024 IUs (and the P2L's slots as many), not pages anywhere as random
    # writes of the same size do: the estimate holds the run's measured peak without being
    # refused as the whole map (29 GiB) was.
    job = "[j]\nfilename=/dev/nvme0n1\ndirect=1\nrw={rw}\nbs=128k\nioengine=libaio\niodepth=32\nruntime=10\ntime_based\n"
    kw = dict(profile=HUGE, scale=1, precondition="sequential", memory_limit="none")
    random = memory.estimate(api.build(job.format(rw="randwrite"), **kw).core).total
    assert random > 8 << 30
    out = _child("import os\nfrom ssdlab import api\nfrom ssdlab.analysis import memory\n"
                 f"spec = api.build({job.format(rw='write')!r}, **{kw!r})\n"
                 "out['estimate'] = memory.estimate(spec.core).total\n"
                 "out['base'] = int(open('/proc/self/statm').read().split()[1]) * os.sysconf('SC_PAGE_SIZE')\n"
                 "api.execute(spec)\n")
    measured = out["peak"] - out["base"]
    assert measured <= out["estimate"] <= max(4 * measured, 256 << 20), (out, measured)
    assert out["estimate"] < random / 50


def test_small_writes_are_guessed_at_the_rate_their_indirection_units_allow():
    # A 4 KiB write to a drive of 16 KiB IUs programs its whole IU: a time-based job's
    # I/O count (and so the map pages it touches) is guessed at a quarter of the program
    # bandwidth, so 2 s of random writes to the full-size 61.44 TB drive are not refused.
    spec = api.build("[j]\nfilename=/dev/nvme0n1\ndirect=1\nrw=randwrite\nbs={bs}\nioengine=libaio\niodepth=32\nruntime=2\ntime_based\n"
                     .format(bs="4k"), profile=HUGE, scale=1, precondition="sequential", memory_limit="none")
    device, jobs, host = spec.core["targets"][0]["device"], spec.core["jobs"], spec.core["host"]
    small = memory.rate_estimate(device, jobs, host)
    sized = [{"split": [[16384, 100.0]], "range_min": None, "range_max": None}] * 3
    big = memory.rate_estimate(device, [dict(jobs[0], block_sizes=sized)], host)
    assert device["ftl"]["iu_bytes"] == 16384
    assert small == pytest.approx(big / 4, rel=0.01), (small, big)
    assert memory.estimate(spec.core).total < 12 << 30


def _rebuild_spec(limit):
    """RAID 5 of three full-size 61.44 TB drives filled in order and a fresh spare, rebuilt
    while a writer writes 1 MB sequentially up to the array's end."""
    from ssdlab.system import raid

    sysd = raid(HUGE, level=5, drives=3, chunk="512k", spares=1, precondition="sequential", scale=1.0)
    job = "[w]\nfilename=/dev/md0\ndirect=1\nrw=write\nbs=1m\nioengine=libaio\niodepth=8\n"
    return api.build(job, system=sysd, until="rebuild", memory_limit=limit)


def test_a_rebuild_whose_jobs_writes_the_estimate_cannot_bound_runs_watched():
    # The writer's size is the array's end, so the estimate counts every map whole; the run
    # ends with its rebuild, and without the writes it holds a few hundred MiB.
    whole = memory.estimate(_rebuild_spec("none").core)
    before = memory.estimate(_rebuild_spec("none").core, writes=False)
    assert whole.total > 100 << 30 and before.total < 1 << 30, (whole.total, before.total)
    spec = _rebuild_spec("8GiB")
    assert spec.memory_guard == 8 << 30
    assert any(w.startswith("memory: the estimate (") and "it runs watched" in w for w in spec.warnings), spec.warnings
    # Nothing to watch without a limit; and a run that does not end with a rebuild is refused.
    assert _rebuild_spec("none").memory_guard is None
    with pytest.raises(memory.MemoryLimitError, match="this run needs about"):
        api.build("[w]\nfilename=/dev/nvme0n1\ndirect=1\nrw=write\nbs=1m\n", profile=HUGE, scale=1,
                  precondition="sequential", memory_limit="8GiB")
    # Where even the run before its writes does not fit, it is refused as before.
    with pytest.raises(memory.MemoryLimitError, match="this run needs about"):
        _rebuild_spec(str(before.total // 2))


def test_the_watch_stops_a_run_that_passes_its_memory_limit():
    # A second of random writes keeps the core busy for several of the watch's 100 ms looks,
    # and its random map and the drive's state take more than the 1 KiB it is allowed.
    spec = api.build("[w]\nfilename=/dev/sda\nrw=randwrite\nbs=4k\nioengine=libaio\niodepth=32\nruntime=1\nsize=4g\n",
                     profile="samsung-850-pro", precondition="sequential")
    watched = spec.model_copy(update={"memory_guard": 1024})
    with pytest.raises(memory.MemoryLimitError) as e:
        api.execute(watched)
    message = str(e.value)
    assert message.startswith("the run passed its memory limit of 1.0KiB") and "\n" not in message, message
    # Unwatched, the same run completes.
    assert api.execute(spec).core["jobs"][0]["write"]["ios"] > 0


def test_only_writers_that_go_on_in_order_are_counted_as_such():
    def written(rw):
        spec = api.build(f"[j]\nfilename=/dev/nvme0n1\ndirect=1\nrw={rw}\nbs=4k\nnumber_ios=1000\n", profile=HUGE,
                         scale=1, precondition="sequential", memory_limit="none")
        return memory._written_bytes(spec.core)[0][0]

    assert written("write").sequential and written("trimwrite").sequential
    # Skipping 16 MiB after each write puts each on a page of its own; random is random.
    assert not written("write:16m").sequential and not written("randwrite").sequential


def test_a_rebuild_writes_the_spares_maps_as_far_as_it_goes():
    # The replacement is fresh, and the rebuild writes it in order through the timed model:
    # its maps are resident as far as the rebuild goes (all of them for a whole rebuild).
    from dataclasses import replace

    from ssdlab.system import raid

    def spare_map(limit):
        sysd = raid(HUGE, level=5, drives=3, chunk="512k", spares=1, precondition="sequential", scale=1.0)
        a = sysd.arrays[0]
        sysd.arrays[0] = replace(a, failures=[(a.members[0].name, 0)], rebuild_limit=limit)
        spec = api.build("[j]\nfilename=/dev/md0\ndirect=1\nrw=read\nbs=1m\nsize=1m\n", system=sysd, until="rebuild",
                         memory_limit="none")
        maps = [t for t in memory.estimate(spec.core).terms if t.kind == "flash map"]
        return maps[-1].bytes, maps[0].bytes

    whole, member = spare_map(None)
    assert whole > 29 << 30 and member < 128 << 20
    sample, _ = spare_map(256 << 20)
    # 256 MiB in order: 16,384 IUs, a page of each map per 1,024 of them (and one at each end).
    assert member < sample < member + (1 << 20), (sample, member)


def test_a_writer_in_order_spreads_its_writes_over_an_arrays_members():
    # A recorder on RAID 0 of eight full-size 1.6 TB drives: each member takes an eighth of the
    # stream (and a chunk at each end), not all of it, as a random writer's might.
    job = "[w]\nfilename=/dev/md0\ndirect=1\nrw={rw}\nbs=1m\nioengine=libaio\niodepth=64\nruntime={t}\ntime_based\n"
    src = "ssdlab.raid('samsung-pm1725b-1.6tb', 0, 8, chunk='128k', scale=1.0)"

    def flash(rw, t):
        sysd = ssdlab.raid("samsung-pm1725b-1.6tb", 0, 8, chunk="128k", scale=1.0)
        spec = api.build(job.format(rw=rw, t=t), system=sysd, memory_limit="none")
        return [x.bytes for x in memory.estimate(spec.core).terms if x.kind == "flash map"]

    ordered, scattered = flash("write", 60), flash("randwrite", 60)
    assert len(ordered) == 8 and max(ordered) < 1 << 30 < min(scattered), (ordered, scattered)
    out = _child("import os\nimport ssdlab\nfrom ssdlab import api\nfrom ssdlab.analysis import memory\n"
                 f"spec = api.build({job.format(rw='write', t=10)!r}, system={src}, memory_limit='none')\n"
                 "out['estimate'] = memory.estimate(spec.core).total\n"
                 "out['base'] = int(open('/proc/self/statm').read().split()[1]) * os.sysconf('SC_PAGE_SIZE')\n"
                 "api.execute(spec)\n")
    assert out["peak"] - out["base"] <= out["estimate"] < 1 << 30, out
