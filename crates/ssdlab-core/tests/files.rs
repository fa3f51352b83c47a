//! File-level work through the file layer: fio's pattern over files, and file programs, on
//! ext3 and ext4 over simulated drives; what reaches the devices, and the books kept.

mod common;

use ssdlab_core::array::{ArrayConfig, EngineConfig, MdConfig, MemberSpec, RaidLevel};
use ssdlab_core::block::{CfqTunables, SchedulerConfig};
use ssdlab_core::device::DriveConfig;
use ssdlab_core::device::hdd::HddConfig;
use ssdlab_core::device::ssd::{Precondition, SsdConfig};
use ssdlab_core::file::{FileSystemSpec, FsType, KernelEra, MemoryConfig};
use ssdlab_core::host::HostConfig;
use ssdlab_core::report::SimResult;
use ssdlab_core::sim::{run, SimSpec, Until};
use ssdlab_core::target::{DeviceConfig, TargetSpec};
use ssdlab_core::workload::files::{FileAccess, FileEngine, FileOp, FileService, FileSetSpec, Pick, SizeSpec};
use ssdlab_core::workload::{JobSpec, RwMode};

const KIB: u64 = 1024;
const MIB: u64 = 1 << 20;

fn host(era: KernelEra) -> HostConfig {
    let mut h = HostConfig::ideal();
    h.memory = Some(MemoryConfig::new(era, 2 << 30, 2));
    h
}

fn system(fs: FsType, era: KernelEra, sets: Vec<FileSetSpec>, jobs: Vec<JobSpec>) -> SimSpec {
    let target = TargetSpec {
        name: "sda".into(),
        device: DeviceConfig::NandSsd(SsdConfig::generic(4)),
        precondition: Precondition::None,
        scheduler: Default::default(),
        queue: Default::default(),
        filesystem: Some(FileSystemSpec::new(fs)),
    };
    SimSpec { seed: 1, host: host(era), targets: vec![target], jobs, interval_ns: None, until: Default::default(), limits: Default::default(), file_sets: sets, network: None }
}

fn set(name: &str, entries: u64, bytes: u64, prealloc: f64) -> FileSetSpec {
    FileSetSpec { name: name.into(), target: 0, dir: format!("/{name}"), entries, size: SizeSpec::Fixed { bytes }, dir_width: 0, prealloc, dirs: false, block_device: false, unwritten: false, names_cached: false, maps_cached: false }
}

fn fio_on_files(rw: RwMode, bs: u64, file_bytes: u64, ios: u64, direct: bool) -> JobSpec {
    let mut j = JobSpec::simple("f", rw, bs, 1, file_bytes);
    j.number_ios = Some(ios);
    j.io_limit = u64::MAX;
    j.files = Some(FileAccess { set: 0, direct, service: FileService::Roundrobin, end_fsync: false, datasync: false, unlink: false, fadvise: None, program: None, engine: None, client: None });
    j
}

use common::file_program as program;

fn device_read_bytes(r: &SimResult) -> u64 {
    r.devices[0].disk.read_sectors * 512
}

fn device_write_bytes(r: &SimResult) -> u64 {
    r.devices[0].disk.write_sectors * 512
}

#[test]
fn buffered_random_reads_miss_then_hit_the_page_cache() {
    // 16 files of 1 MiB laid out before the run; 4 KiB random reads, twice the data.
    let run_in = |era| {
        let spec = system(FsType::Ext4, era, vec![set("data", 16, MIB, 1.0)], vec![fio_on_files(RwMode::Randread, 4 * KIB, MIB, 8192, false)]);
        run(&spec).expect("run")
    };
    let mut seen = Vec::new();
    for era in [KernelEra::Y2008, KernelEra::Today] {
        let r = run_in(era);
        let f = r.files.clone().expect("a file report");
        assert_eq!(r.jobs[0].read.ios, 8192);
        assert_eq!(f.cache_hits + f.cache_misses, 8192, "one lookup per page read");
        assert!(f.cache_misses > 1500 && f.cache_hits > 3000, "{era:?}: {f:?}");
        // The device reads what missed and what read-ahead added, each page once at most.
        assert_eq!(device_read_bytes(&r), (f.cache_misses + f.readahead_pages) * 4 * KIB, "{f:?}");
        assert!(f.cache_misses + f.readahead_pages <= 16 * 256, "never more pages read than the files hold");
        seen.push(f);
    }
    // 2.6.2x reads ahead only from a file's first page; today a read just after a cached run
    // reads ahead as a stream would (context read-ahead): more read ahead, fewer misses.
    assert!(seen[0].readahead_pages < seen[0].cache_misses / 4, "{:?}", seen[0]);
    assert!(seen[1].readahead_pages > 2 * seen[0].readahead_pages, "{seen:?}");
    assert!(seen[1].cache_misses < seen[0].cache_misses, "{seen:?}");
}

#[test]
fn each_file_keeps_its_own_random_map_so_a_pass_writes_every_page_of_every_file_once() {
    // 16 files of 1 MiB, 4 KiB random writes in turn over them, one pass: 4,096 writes. fio
    // keeps a random map per file, so each page of each file is written exactly once and
    // dirtied once; with one map shared by the files, a pass over one file's blocks would
    // send some pages twice (dirtied once) and leave others untouched.
    let spec = system(FsType::Ext4, KernelEra::Today, vec![set("data", 16, MIB, 1.0)], vec![fio_on_files(RwMode::Randwrite, 4 * KIB, MIB, 4096, false)]);
    let r = run(&spec).expect("run");
    let f = r.files.as_ref().expect("a file report");
    assert_eq!(r.jobs[0].write.ios, 4096);
    assert_eq!(f.dirtied_pages, 4096, "every page of the 16 files dirtied once: {f:?}");
    assert_dirty_pages_conserved(f);
}

#[test]
fn sequential_buffered_reads_are_read_ahead_in_large_requests() {
    let mut job = fio_on_files(RwMode::Read, 4 * KIB, 4 * MIB, 1024, false);
    job.files.as_mut().unwrap().service = FileService::Sequential;
    let spec = system(FsType::Ext4, KernelEra::Today, vec![set("seq", 1, 4 * MIB, 1.0)], vec![job]);
    let r = run(&spec).expect("run");
    let f = r.files.as_ref().unwrap();
    assert_eq!(device_read_bytes(&r), 4 * MIB, "the file read once");
    assert!(f.readahead_pages > 500, "{f:?}");
    let reqs = r.devices[0].disk.read_ios;
    assert!(reqs <= 64, "read-ahead windows of up to 128 KiB: {reqs} requests");
}

#[test]
fn fadvise_sets_the_read_ahead_window_of_sequential_and_random_reads() {
    use ssdlab_core::io::Fadvise;
    // One 4 MiB file read whole in 4 KiB reads, for each advice fio can give. Its requests:
    // windows of 128 KiB (read_ahead_kb) without advice, 256 KiB under POSIX_FADV_SEQUENTIAL
    // (mm/fadvise.c doubles ra_pages; Linux 6.18 on a loop device: 249 KiB a request with,
    // 127 KiB without), and the reads' own 4 KiB pages under POSIX_FADV_RANDOM.
    let reqs = |advice: Option<Fadvise>| {
        let mut job = fio_on_files(RwMode::Read, 4 * KIB, 4 * MIB, 1024, false);
        job.files.as_mut().unwrap().fadvise = advice;
        let spec = system(FsType::Ext4, KernelEra::Today, vec![set("seq", 1, 4 * MIB, 1.0)], vec![job]);
        let r = run(&spec).expect("run");
        assert_eq!(device_read_bytes(&r), 4 * MIB, "{advice:?}: the file read once");
        r.devices[0].disk.read_ios
    };
    // The ramps (4, 8, 16 pages, then the largest window) and the file's 1,024 pages.
    assert_eq!(reqs(None), 3 + (1024u64 - 28).div_ceil(32));
    assert_eq!(reqs(Some(Fadvise::Normal)), reqs(None));
    assert_eq!(reqs(Some(Fadvise::Sequential)), 4 + (1024u64 - 60).div_ceil(64));
    assert_eq!(reqs(Some(Fadvise::Random)), 1024);
}

#[test]
fn created_and_fsynced_files_reach_the_device_with_their_metadata_and_journal() {
    for fs in [FsType::Ext4, FsType::Ext3] {
        let ops = vec![
            FileOp::Create { set: 0, pick: Pick::Next },
            FileOp::WriteWhole { io_bytes: 16 * KIB },
            FileOp::Fsync { data_only: false },
            FileOp::Close,
        ];
        let spec = system(fs, KernelEra::Y2008, vec![set("mail", 200, 16 * KIB, 0.0)], vec![program(ops, None)]);
        let r = run(&spec).expect("run");
        let f = r.files.as_ref().unwrap();
        let ops = &r.jobs[0].file_ops;
        assert_eq!(ops[0].ops, 200, "{fs:?}: every entry created once, then the Next pick ran out");
        assert_eq!(ops[1].bytes, 200 * 16 * KIB);
        assert!(f.commits >= 1 && f.journal_blocks > 0, "{fs:?}: fsync commits the journal: {f:?}");
        let data = 200 * 16 * KIB;
        let written = device_write_bytes(&r);
        assert!(written >= data, "{fs:?}: the data is on the device: {written} < {data}");
        assert!(written < 3 * data, "{fs:?}: data, journal and metadata, not more: {written}");
        assert_eq!(f.failed_ops, 0);
    }
}

#[test]
fn deleting_every_other_file_leaves_small_free_extents() {
    // The seed's aging on a small ext3 of 1 KiB blocks: 4 KB files, every even one deleted.
    let mut target_fs = FileSystemSpec::new(FsType::Ext3);
    target_fs.block_size = Some(1024);
    let create = vec![FileOp::Create { set: 0, pick: Pick::Next }, FileOp::WriteWhole { io_bytes: 4 * KIB }, FileOp::Close];
    let delete = vec![FileOp::Delete { set: 0, pick: Pick::Every { first: 1, step: 2 } }];
    let mut first = program(create, None);
    first.name = "fill".into();
    let mut second = program(delete, None);
    second.name = "delete".into();
    second.start_after = vec![0];
    let mut spec = system(FsType::Ext3, KernelEra::Y2008, vec![set("a", 2000, 4 * KIB, 0.0)], vec![first, second]);
    spec.targets[0].filesystem = Some(target_fs);
    let r = run(&spec).expect("run");
    let f = r.files.as_ref().unwrap();
    assert_eq!(r.jobs[1].file_ops[0].ops, 1000);
    let hist = &f.free_extents[0];
    let small: u64 = hist.iter().filter(|b| b.0 < 8 * KIB).map(|b| b.1).sum();
    assert!(small >= 900, "about a thousand 4 KiB holes: {hist:?}");
}

#[test]
fn a_queue_runner_rescans_while_its_producers_run_and_empties_the_queue() {
    // Four writers queue 50 files each; one runner lists the queue and deletes from it,
    // sleeping when it finds it empty, and ends once the writers are done and it is empty.
    let write = vec![FileOp::Create { set: 0, pick: Pick::Rotor }, FileOp::WriteWhole { io_bytes: 8 * KIB }, FileOp::Close];
    let mut jobs: Vec<JobSpec> = (0..4)
        .map(|i| {
            let mut j = program(write.clone(), Some(50));
            j.name = format!("writer{i}");
            j
        })
        .collect();
    let mut runner = program(vec![FileOp::ListDir { set: 0 }, FileOp::Delete { set: 0, pick: Pick::Rotor }], None);
    runner.name = "runner".into();
    let p = runner.files.as_mut().unwrap().program.as_mut().unwrap();
    p.producers = vec![0, 1, 2, 3];
    p.idle_ns = 10_000_000;
    jobs.push(runner);
    let spec = system(FsType::Ext4, KernelEra::Y2008, vec![set("queue", 1000, 8 * KIB, 0.0)], jobs);
    let r = run(&spec).expect("run");
    for w in &r.jobs[..4] {
        assert_eq!(w.file_ops[0].ops, 50, "each writer queued its 50 files");
        assert_eq!(w.file_ops[0].errors, 0);
    }
    let deletes = &r.jobs[4].file_ops[1];
    assert_eq!(deletes.ops - deletes.errors, 200, "the runner deleted every queued file once: {deletes:?}");
    assert!(deletes.errors >= 1, "it found the queue empty at least once (at the end)");
    // Ending when empty, not before: the run lasts past the last writer.
    assert_eq!(r.files.as_ref().unwrap().failed_ops, deletes.errors);
}

/// filebench's FILEBENCH_NORSC: a create that finds every file of its set there ends the
/// thread (`NoFile::EndThread`), or the whole run (`NoFile::EndRun`); by default the call
/// fails and the program goes on until its runtime.
#[test]
fn a_create_that_finds_every_file_there_ends_the_thread_or_the_run_as_the_program_says() {
    use ssdlab_core::workload::files::NoFile;
    let create = vec![FileOp::Create { set: 0, pick: Pick::Random }, FileOp::WriteWhole { io_bytes: 4 * KIB }, FileOp::Close];
    // Every job stops at 10 s at the latest (as under filebench's run time), so that a
    // program that failed to end shows as a late end rather than a run that never ends.
    const LATEST: u64 = 10_000_000_000;
    let timed = |mut j: JobSpec| {
        (j.runtime_ns, j.time_based) = (Some(LATEST), true);
        j
    };
    let creator = |on_no_file: NoFile| {
        let mut j = program(create.clone(), None);
        j.files.as_mut().unwrap().program.as_mut().unwrap().on_no_file = on_no_file;
        timed(j)
    };
    // A reader of a set made before the run, which never runs out of files.
    let reader = || {
        let mut j = program(vec![FileOp::Open { set: 1, pick: Pick::Random }, FileOp::ReadWhole { io_bytes: 4 * KIB }, FileOp::Close], None);
        j.files.as_mut().unwrap().set = 1;
        timed(j)
    };
    let sets = || vec![set("new", 40, 4 * KIB, 0.0), set("old", 10, 4 * KIB, 1.0)];

    // Two creators that end when the set is full: 40 files made, each thread's create the
    // operation that ended it, and that call not counted among the creates.
    let r = run(&system(FsType::Ext4, KernelEra::Today, sets(), vec![creator(NoFile::EndThread), creator(NoFile::EndThread)])).expect("run");
    let made: u64 = r.jobs.iter().map(|j| j.file_ops[0].ops).sum();
    assert_eq!(made, 40);
    for j in &r.jobs {
        // Only the one that found the set full: a pick that found the last files claimed by
        // the other thread waited for it (filebench's fileset_pick), then found none.
        assert!(j.no_file_op == Some(0) && j.file_ops[0].errors == 1, "{:?}", j.file_ops);
        assert!(j.end_ns < LATEST / 10, "ended at {} ns", j.end_ns);
    }

    // EndRun: the creator's end stops the reader, which would read for ever.
    let r = run(&system(FsType::Ext4, KernelEra::Today, sets(), vec![creator(NoFile::EndRun), reader()])).expect("run");
    assert_eq!(r.jobs[0].file_ops[0].ops, 40);
    assert_eq!(r.jobs[0].no_file_op, Some(0));
    assert!(r.jobs[1].file_ops[1].ops > 0 && r.jobs[1].no_file_op.is_none(), "{:?}", r.jobs[1].file_ops);
    assert!(r.jobs[1].end_ns <= r.jobs[0].end_ns + 1_000_000, "the reader stopped with the creator at {} ns, not {} ns", r.jobs[0].end_ns, r.jobs[1].end_ns);

    // Fail (the default): the creator goes on failing until its runtime.
    let mut j = creator(NoFile::Fail);
    j.runtime_ns = Some(50_000_000);
    let r = run(&system(FsType::Ext4, KernelEra::Today, sets(), vec![j])).expect("run");
    assert_eq!(r.jobs[0].no_file_op, None);
    assert_eq!(r.jobs[0].file_ops[0].ops - r.jobs[0].file_ops[0].errors, 40);
    assert!(r.jobs[0].file_ops[0].errors > 1, "{:?}", r.jobs[0].file_ops[0]);
}

/// Pages dirtied are written back, dropped dirty by a delete, or still dirty at the end:
/// none is lost and none is written twice without being dirtied twice.
fn assert_dirty_pages_conserved(f: &ssdlab_core::report::FileReport) {
    assert_eq!(f.dirtied_pages, f.written_back_pages + f.dropped_dirty_pages + f.dirty_pages_at_end, "{f:?}");
}

#[test]
fn a_writer_past_a_small_cache_is_throttled_while_the_flusher_writes_and_finishes() {
    // 48 MiB of cache, a dirty limit of all of it, a 128 MiB file: balance_dirty_pages
    // pauses the writer while the flusher writes, and the whole file goes through.
    let mut job = fio_on_files(RwMode::Write, 256 * KIB, 128 * MIB, 512, false);
    job.files.as_mut().unwrap().service = FileService::Sequential;
    let mut spec = system(FsType::Ext4, KernelEra::Today, vec![set("big", 1, 128 * MIB, 1.0)], vec![job]);
    let m = spec.host.memory.as_mut().unwrap();
    m.ram_bytes = 64 * MIB;
    m.reserved_bytes = 16 * MIB;
    m.dirty_ratio = Some(100);
    m.dirty_background_ratio = Some(95);
    let r = run(&spec).expect("run");
    let f = r.files.as_ref().unwrap();
    assert_eq!(r.jobs[0].write.bytes, 128 * MIB, "the whole file written");
    assert!(f.throttled_ns > 0, "the writer waited: {f:?}");
    assert!(f.written_back_pages >= (128 * MIB - 48 * MIB) / 4096, "{f:?}");
    assert_eq!(f.failed_ops, 0);
    assert_dirty_pages_conserved(f);
    // The flusher sleeps while its writeback is in flight: it does not wake every nanosecond
    // (it did, when its periodic pass fell due under background writeback).
    assert!(r.events < 20 * f.written_back_pages, "{} events for {} pages written back", r.events, f.written_back_pages);
}

#[test]
fn the_flusher_sleeps_while_its_writeback_is_in_flight() {
    // Writeback past the background threshold for longer than the flusher's period: its
    // periodic pass falls due while its own writes are in flight. It used to be re-armed a
    // nanosecond on, again and again until they completed.
    let mut job = fio_on_files(RwMode::Write, 256 * KIB, 2048 * MIB, 8192, false);
    job.files.as_mut().unwrap().service = FileService::Sequential;
    let mut spec = system(FsType::Ext4, KernelEra::Today, vec![set("big", 1, 2048 * MIB, 1.0)], vec![job]);
    spec.targets[0].device = DeviceConfig::Hdd(HddConfig::generic());
    let m = spec.host.memory.as_mut().unwrap();
    m.ram_bytes = 64 * MIB;
    m.reserved_bytes = 16 * MIB;
    // The bug made this run take minutes instead of a fraction of a second: bounded here.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(run(&spec).expect("run"));
    });
    let r = rx.recv_timeout(std::time::Duration::from_secs(120)).expect("the run ends within two minutes");
    let f = r.files.as_ref().unwrap();
    assert!(r.end_ns > 6_000_000_000, "the run outlasts the flusher's period: {} ns", r.end_ns);
    assert!(r.events < 20 * f.written_back_pages, "{} events for {} pages written back", r.events, f.written_back_pages);
    assert_dirty_pages_conserved(f);
}

#[test]
fn dirty_pages_are_conserved_through_writeback_deletes_and_the_end() {
    let write = vec![FileOp::Create { set: 0, pick: Pick::Rotor }, FileOp::WriteWhole { io_bytes: 4 * KIB }, FileOp::Close];
    let mut jobs: Vec<JobSpec> = (0..2).map(|_| program(write.clone(), Some(300))).collect();
    let mut runner = program(vec![FileOp::ListDir { set: 0 }, FileOp::Delete { set: 0, pick: Pick::Rotor }], None);
    let p = runner.files.as_mut().unwrap().program.as_mut().unwrap();
    p.producers = vec![0, 1];
    p.idle_ns = 2_000_000_000;
    jobs.push(runner);
    for fs in [FsType::Ext3, FsType::Ext4] {
        let spec = system(fs, KernelEra::Y2008, vec![set("q", 2000, 24 * KIB, 0.0)], jobs.clone());
        let r = run(&spec).expect("run");
        let f = r.files.as_ref().unwrap();
        assert!(f.dropped_dirty_pages > 0, "{fs:?}: some files deleted before writeback: {f:?}");
        assert_dirty_pages_conserved(f);
    }
}

#[test]
fn writers_that_fsync_every_file_share_commits_and_none_waits_for_ever() {
    // A mail queue whose writers fsync each file (as an MTA does before it answers): fsyncs
    // meet commits under way and the flusher's writeback of their files. On ext3 each
    // fsync commits the transaction; on ext4 the same. Every page reaches the device before
    // its file is deleted.
    let write = vec![
        FileOp::Create { set: 0, pick: Pick::Rotor },
        FileOp::WriteWhole { io_bytes: 4 * KIB },
        FileOp::Fsync { data_only: false },
        FileOp::Close,
    ];
    let mut jobs: Vec<JobSpec> = (0..4).map(|_| program(write.clone(), Some(200))).collect();
    for _ in 0..2 {
        let mut runner = program(vec![FileOp::ListDir { set: 0 }, FileOp::Delete { set: 0, pick: Pick::Rotor }], None);
        let p = runner.files.as_mut().unwrap().program.as_mut().unwrap();
        p.producers = vec![0, 1, 2, 3];
        p.idle_ns = 100_000_000;
        jobs.push(runner);
    }
    let hdd = || DeviceConfig::Hdd(HddConfig::generic());
    for (fs, device) in [(FsType::Ext3, hdd()), (FsType::Ext4, hdd()), (FsType::Ext3, DeviceConfig::NandSsd(SsdConfig::generic(4)))] {
        let mut spec = system(fs, KernelEra::Y2008, vec![set("q", 2000, 12 * KIB, 0.0)], jobs.clone());
        spec.targets[0].device = device;
        let r = run(&spec).unwrap_or_else(|e| panic!("{fs:?}: {e}"));
        let f = r.files.as_ref().unwrap();
        assert_eq!(f.dirtied_pages, 800 * 3, "{fs:?}: {f:?}");
        assert_eq!(f.written_back_pages, f.dirtied_pages, "{fs:?}: every page written before its delete: {f:?}");
        assert!(f.commits > 0 && f.commits <= 800, "{fs:?}: fsyncs share commits: {f:?}");
        assert_eq!(f.failed_ops, r.jobs[4..].iter().map(|j| j.file_ops.iter().map(|o| o.errors).sum::<u64>()).sum::<u64>(), "only runners fail (finding nothing)");
    }
}

#[test]
fn a_2008_kernels_journal_and_writeback_are_background_writes_cfq_does_not_idle_on() {
    // Linux 2.6.28's jbd wrote a commit's ordered data, its log and its commit block with
    // plain WRITE, and the flusher its pages too: CFQ queues them all in one queue of
    // background writeback, which never idles. Writers that fsync every file on an SSD
    // then finish under CFQ as under noop. Sent as synchronous I/O (jbd's and the
    // flusher's each in its own process's queue) they waited out CFQ's idle windows: 1.77 s
    // here against noop's 9.3 ms.
    let write = vec![FileOp::Create { set: 0, pick: Pick::Rotor }, FileOp::WriteWhole { io_bytes: 4 * KIB }, FileOp::Fsync { data_only: false }, FileOp::Close];
    // On md RAID 0 the members' schedulers see the same: md's bios keep their flags.
    let end = |sched: SchedulerConfig, raid: bool| {
        let jobs = (0..4).map(|_| program(write.clone(), Some(100))).collect();
        let mut spec = system(FsType::Ext3, KernelEra::Y2008, vec![set("q", 400, 12 * KIB, 0.0)], jobs);
        if raid {
            let members = (0..2)
                .map(|i| MemberSpec {
                    name: format!("sd{i}"),
                    device: DriveConfig::NandSsd(SsdConfig::generic(4)),
                    precondition: Precondition::None,
                    scheduler: sched,
                    queue: Default::default(),
                })
                .collect();
            let a = ArrayConfig { level: RaidLevel::Raid0, chunk_bytes: 64 * KIB, engine: EngineConfig::Md(MdConfig::default()), members, failures: vec![], spares: vec![], rebuild_limit_bytes: None, verify_data: false };
            spec.targets[0].device = DeviceConfig::Array(a);
        } else {
            spec.targets[0].scheduler = sched;
        }
        let r = run(&spec).expect("run");
        assert_eq!(r.files.as_ref().unwrap().written_back_pages, 400 * 3);
        r.end_ns as f64
    };
    // One idle window is CFQ's due: the first create reads the set's directory block (laid
    // out before the run, not in memory), a synchronous read after which CFQ waits its
    // slice_idle (8 ms) for the reader's next one.
    let slice_idle = CfqTunables::default().slice_idle_ns as f64;
    for raid in [false, true] {
        let (cfq, noop) = (end(SchedulerConfig::Cfq(CfqTunables::default()), raid), end(SchedulerConfig::Noop, raid));
        assert!((cfq - noop).abs() < slice_idle + 0.05 * noop, "raid {raid}: cfq {cfq} ns, noop {noop} ns");
    }
}

#[test]
fn ext3_on_a_2008_kernel_commits_without_barriers_unless_asked() {
    // Before Linux 3.1 ext3 mounted with barrier=0: an fsync's commit sent no cache flush.
    let write = vec![FileOp::Create { set: 0, pick: Pick::Rotor }, FileOp::WriteWhole { io_bytes: 4 * KIB }, FileOp::Fsync { data_only: false }, FileOp::Close];
    let ends: Vec<u64> = [None, Some(true)]
        .into_iter()
        .map(|barriers| {
            let mut spec = system(FsType::Ext3, KernelEra::Y2008, vec![set("q", 500, 8 * KIB, 0.0)], vec![program(write.clone(), Some(100))]);
            spec.targets[0].device = DeviceConfig::Hdd(HddConfig::generic());
            spec.targets[0].filesystem.as_mut().unwrap().barriers = barriers;
            let r = run(&spec).expect("run");
            let flushes: u64 = r.devices.iter().map(|d| d.disk.flush_ios).sum();
            assert_eq!(flushes > 0, barriers == Some(true), "barriers {barriers:?}: {flushes} flushes");
            r.end_ns
        })
        .collect();
    assert!(ends[0] < ends[1], "flushes cost time: {ends:?}");
}

#[test]
fn a_commit_writes_ordered_data_as_data() {
    // ext3's ordered mode: the 5 s commit writes the data of files created since, before its
    // log. Those bios are data, not metadata.
    let write = vec![FileOp::Create { set: 0, pick: Pick::Next }, FileOp::WriteWhole { io_bytes: 4 * KIB }, FileOp::Close];
    let writer = program(write, Some(50));
    let mut wait = program(vec![FileOp::Delay { ns: 6_000_000_000, busy: false }], Some(1));
    wait.start_after = vec![0];
    let spec = system(FsType::Ext3, KernelEra::Y2008, vec![set("f", 50, 8 * KIB, 0.0)], vec![writer, wait]);
    let r = run(&spec).expect("run");
    let f = r.files.as_ref().unwrap();
    assert!(f.commits >= 1, "{f:?}");
    assert_eq!(f.written_back_pages, 100, "{f:?}");
    assert!(f.data_bios >= 1 && f.data_bios <= 100, "the files' data as data bios: {f:?}");
    assert!(f.metadata_bios >= 2, "the log and the commit block: {f:?}");
    assert_dirty_pages_conserved(f);
}

#[test]
fn computing_threads_take_the_host_cores_and_a_sleep_takes_none() {
    // Four threads each compute 10 ms five times (filebench's hog, a scenario's busy delay)
    // on the host's two cores: 200 ms of CPU, so the run lasts 100 ms, the cores are busy
    // throughout, and a thread's computation waits for a core half the time. Sleeping
    // instead, they end in 50 ms with the cores idle.
    let run_with = |busy: bool| {
        let jobs = (0..4).map(|_| program(vec![FileOp::Delay { ns: 10_000_000, busy }], Some(5))).collect();
        let spec = system(FsType::Ext4, KernelEra::Today, vec![set("f", 1, 4 * KIB, 1.0)], jobs);
        run(&spec).expect("run")
    };
    let computing = run_with(true);
    let f = computing.files.as_ref().unwrap();
    let span = f.cpu.end_ns - f.cpu.start_ns;
    assert!((100_000_000..100_100_000).contains(&span), "two cores run 200 ms of CPU in 100 ms: {:?}", f.cpu);
    assert!(f.cpu.busy > 0.999, "{:?}", f.cpu);
    assert_eq!(f.ops, 0, "a computation is no file-system call");
    for j in &computing.jobs {
        let s = &j.file_ops[0];
        assert_eq!(s.ops, 5);
        assert!(s.latency_ns >= 50_000_000, "each took its 10 ms at least: {s:?}");
    }
    let waited: u64 = computing.jobs.iter().map(|j| j.file_ops[0].latency_ns).sum();
    // 20 computations of 10 ms; on two cores first come first served, all but the first two
    // wait 10 ms for a core.
    assert_eq!(waited, 20 * 10_000_000 + 18 * 10_000_000, "{:?}", computing.jobs.iter().map(|j| j.file_ops[0].latency_ns).collect::<Vec<_>>());
    let sleeping = run_with(false);
    let f = sleeping.files.as_ref().unwrap();
    assert!(f.cpu.end_ns - f.cpu.start_ns < 51_000_000, "{:?}", f.cpu);
    assert!(f.cpu.busy < 0.001, "{:?}", f.cpu);
}

#[test]
fn fsync_commits_a_files_new_times_and_fdatasync_only_a_new_size() {
    // An overwrite in place changes only the file's times: fsync logs them (a commit),
    // fdatasync does not; an append changes the size, which both wait for. Either kernel.
    for era in [KernelEra::Today, KernelEra::Y2008] {
        let commits = |data_only: bool, append: bool| {
            let write = if append {
                FileOp::Append { size: SizeSpec::Fixed { bytes: 4 * KIB }, io_bytes: 4 * KIB }
            } else {
                FileOp::Write { io_bytes: 4 * KIB, random: false, zipf: None }
            };
            let ops = vec![FileOp::Open { set: 0, pick: Pick::Next }, write, FileOp::Fsync { data_only }, FileOp::Close];
            let fs = if era == KernelEra::Today { FsType::Ext4 } else { FsType::Ext3 };
            let spec = system(fs, era, vec![set("f", 4, 64 * KIB, 1.0)], vec![program(ops, Some(4))]);
            run(&spec).expect("run").files.unwrap().commits
        };
        assert!(commits(false, false) >= 1, "{era:?}: fsync logs the new times");
        assert_eq!(commits(true, false), 0, "{era:?}: fdatasync leaves the times to the next commit");
        assert!(commits(true, true) >= 1, "{era:?}: fdatasync waits for a new size");
    }
}

#[test]
fn an_fsync_of_a_file_already_on_disk_commits_nothing_of_other_files() {
    // One thread writes and fsyncs its file, then fsyncs it again and again; another
    // creates files meanwhile. Only the first fsync commits: the file's inode is on disk after
    // it (today: its transaction committed; 2008: sync_inode cleaned it), so the others do
    // not commit the creations, which wait for the 5 s timer.
    for (fs, era) in [(FsType::Ext4, KernelEra::Today), (FsType::Ext3, KernelEra::Y2008)] {
        let mut ops = vec![FileOp::Open { set: 0, pick: Pick::Next }, FileOp::Append { size: SizeSpec::Fixed { bytes: 4 * KIB }, io_bytes: 4 * KIB }];
        ops.extend(std::iter::repeat_n(FileOp::Fsync { data_only: false }, 20));
        let syncer = program(ops, Some(1));
        let creator = program(vec![FileOp::Create { set: 1, pick: Pick::Next }, FileOp::Close], Some(200));
        let spec = system(fs, era, vec![set("f", 1, 0, 1.0), set("new", 200, 4 * KIB, 0.0)], vec![syncer, creator]);
        let r = run(&spec).expect("run");
        let f = r.files.as_ref().unwrap();
        assert_eq!(r.jobs[0].file_ops[2..22].iter().map(|o| o.ops).sum::<u64>(), 20);
        assert_eq!(f.commits, 1, "{era:?}: commits for one file's 20 fsyncs ({f:?})");
    }
}

#[test]
fn sync_writes_every_dirty_page_and_commits_before_it_returns() {
    // `cp -a ...; sync`: the copy leaves dirty pages (under the background threshold: the
    // flusher would wait 30 s for them); sync writes them, waits, and commits the journal.
    for fs in [FsType::Ext3, FsType::Ext4] {
        let write = vec![FileOp::Create { set: 0, pick: Pick::Next }, FileOp::WriteWhole { io_bytes: 4 * KIB }, FileOp::Close];
        let writer = program(write, Some(200));
        let mut sync = program(vec![FileOp::Sync { set: 0 }], Some(1));
        sync.start_after = vec![0];
        let spec = system(fs, KernelEra::Y2008, vec![set("f", 200, 16 * KIB, 0.0)], vec![writer, sync]);
        let r = run(&spec).expect("run");
        let f = r.files.as_ref().unwrap();
        assert_eq!(f.dirtied_pages, 800, "{fs:?}: {f:?}");
        assert_eq!(f.dirty_pages_at_end, 0, "{fs:?}: nothing left dirty: {f:?}");
        assert_eq!(f.written_back_pages, 800, "{fs:?}: {f:?}");
        assert!(f.commits >= 1 && f.journal_blocks > 0, "{fs:?}: the journal committed: {f:?}");
        assert!(device_write_bytes(&r) >= 800 * 4096, "{fs:?}: the data reached the device");
        // The sync took the device's time: it ended after the writes did.
        let sync_ns = r.jobs[1].file_ops[0].latency_ns;
        assert!(sync_ns > 100_000, "{fs:?}: sync took {sync_ns} ns");
        assert_dirty_pages_conserved(f);
    }
}

#[test]
fn writeback_plugs_across_files_so_adjacent_small_files_merge_into_large_requests() {
    // 200 files of 16 KiB on ext4 (delayed allocation lays them out one after another),
    // written back by `sync` or, left alone, by the flusher once they expire: either way
    // under one block plug, so a file's run joins the last one's request, as the kernel's
    // wb_writeback plug does (the loop device's diskstats in docs/files.md: 442 requests
    // and 1,851 merges for 2,000 small files copied).
    let files = 200u64;
    for by_sync in [true, false] {
        let write = vec![FileOp::Create { set: 0, pick: Pick::Next }, FileOp::WriteWhole { io_bytes: 4 * KIB }, FileOp::Close];
        let writer = program(write, Some(files));
        let mut after = if by_sync {
            program(vec![FileOp::Sync { set: 0 }], Some(1))
        } else {
            // Past dirty_expire (30 s) and the flusher's next wake-up.
            program(vec![FileOp::Delay { ns: 40_000_000_000, busy: false }], Some(1))
        };
        after.start_after = vec![0];
        let spec = system(FsType::Ext4, KernelEra::Today, vec![set("f", files, 16 * KIB, 0.0)], vec![writer, after]);
        let r = run(&spec).expect("run");
        let f = r.files.as_ref().unwrap();
        assert_eq!(f.written_back_pages, files * 4, "sync {by_sync}: {f:?}");
        let d = &r.devices[0].disk;
        assert!(device_write_bytes(&r) >= files * 16 * KIB, "sync {by_sync}: the data reached the device");
        // One bio a file at least (data_bios), but far fewer requests: most bios merged.
        assert!(f.data_bios >= files, "sync {by_sync}: {f:?}");
        assert!(d.write_ios * 10 <= files, "sync {by_sync}: {} requests for {files} files ({d:?})", d.write_ios);
        assert!(d.write_merges >= files * 9 / 10, "sync {by_sync}: {d:?}");
        assert_dirty_pages_conserved(f);
    }
}

#[test]
fn writeback_requests_stop_at_the_queues_segments_and_sectors() {
    // 8 MiB written and fsynced in one file: writeback's runs are cut and merged at 128
    // pages (BLK_MAX_SEGMENTS), at fewer where the queue takes fewer segments, and at
    // max_sectors_kb where that is smaller.
    let mean_request = |max_segments: u32, max_sectors_kb: u32| {
        let mut job = fio_on_files(RwMode::Write, 64 * KIB, 8 * MIB, 128, false);
        job.files.as_mut().unwrap().end_fsync = true;
        let mut spec = system(FsType::Ext4, KernelEra::Today, vec![set("f", 1, 8 * MIB, 1.0)], vec![job]);
        spec.targets[0].queue.max_segments = max_segments;
        spec.targets[0].queue.max_sectors_kb = max_sectors_kb;
        let r = run(&spec).expect("run");
        let d = &r.devices[0].disk;
        let f = r.files.as_ref().unwrap();
        // The fsync commits the file's new times (its inode block): a descriptor and the
        // block in one request, the commit block in another.
        assert_eq!((f.commits, f.journal_blocks), (1, 3), "{f:?}");
        let data = d.write_sectors * 512 - f.journal_blocks * 4 * KIB;
        assert_eq!(data, 8 * MIB, "the file, written once (its layout was fallocated)");
        data / (d.write_ios - 2)
    };
    assert_eq!(mean_request(128, 1280), 512 * KIB);
    assert_eq!(mean_request(32, 1280), 128 * KIB);
    assert_eq!(mean_request(128, 64), 64 * KIB);
}

#[test]
fn fio_end_fsync_writes_the_files_back_and_unlink_deletes_them() {
    // fio's end_fsync: each file fsynced once the job's I/O is done; unlink: then deleted.
    let run_with = |end_fsync: bool, unlink: bool| {
        let mut job = fio_on_files(RwMode::Write, 64 * KIB, 4 * MIB, 256, false);
        let a = job.files.as_mut().unwrap();
        (a.end_fsync, a.unlink) = (end_fsync, unlink);
        let spec = system(FsType::Ext4, KernelEra::Today, vec![set("f", 4, 4 * MIB, 1.0)], vec![job]);
        let r = run(&spec).expect("run");
        r.files.clone().unwrap()
    };
    let plain = run_with(false, false);
    let dirtied = plain.dirtied_pages;
    assert!(dirtied >= 1024, "{plain:?}");
    assert!(plain.dirty_pages_at_end > 0, "without end_fsync the run ends with dirty pages: {plain:?}");
    let synced = run_with(true, false);
    assert_eq!(synced.dirty_pages_at_end, 0, "{synced:?}");
    assert_eq!(synced.written_back_pages, dirtied, "{synced:?}");
    let unlinked = run_with(false, true);
    assert_eq!(unlinked.dirty_pages_at_end, 0, "{unlinked:?}");
    assert_eq!(unlinked.dropped_dirty_pages + unlinked.written_back_pages, dirtied, "{unlinked:?}");
    assert!(unlinked.dropped_dirty_pages > 0, "deleted before their writeback: {unlinked:?}");
    for f in [&plain, &synced, &unlinked] {
        assert_dirty_pages_conserved(f);
    }
}

/// The bytes mke2fs writes for a file system as `system` makes it on its 4 GiB device (its
/// writes merged where they overlap; discards left out).
fn mkfs_bytes_of(kind: ssdlab_core::fs::FsKind, era: ssdlab_core::fs::Era) -> u64 {
    use ssdlab_core::fs::{FileSystem, FsConfig, MkfsOptions, MkfsWhat};
    let (fs, io) = FileSystem::mkfs(FsConfig::new(&MkfsOptions::new(kind, era, 4 << 30)).unwrap()).unwrap();
    let bs = fs.config().block_size as u64;
    let mut blocks: Vec<u64> = io.writes.iter().filter(|w| w.what != MkfsWhat::Discard).flat_map(|w| w.offset / bs..(w.offset + w.bytes).div_ceil(bs)).collect();
    blocks.sort_unstable();
    blocks.dedup();
    blocks.len() as u64 * bs
}

#[test]
fn a_timed_mkfs_writes_what_mke2fs_writes_and_fsyncs_as_the_kernel_of_its_era() {
    use ssdlab_core::fs::{Era, FsKind};
    for (fs, era, kind, fs_era, flushes) in [
        (FsType::Ext3, KernelEra::Y2008, FsKind::Ext3, Era::Y2008, 0),
        (FsType::Ext4, KernelEra::Today, FsKind::Ext4, Era::Today, 1),
    ] {
        let spec = system(fs, era, vec![set("any", 1, 4 * KIB, 0.0)], vec![program(vec![FileOp::Mkfs { set: 0 }], Some(1))]);
        let r = run(&spec).expect("run");
        let f = r.files.as_ref().unwrap();
        let want = mkfs_bytes_of(kind, fs_era);
        assert_eq!(f.mkfs_bytes, want, "{fs:?}");
        // Every byte mkfs wrote reached the device once; besides, only the journal's commit of
        // the set's directory (made before the run) and its checkpoint.
        let bs = 4 * KIB; // 4 GiB: the "default" size type's blocks
        let journal = (f.journal_blocks + f.checkpoint_blocks) * bs;
        assert_eq!(device_write_bytes(&r), want + journal, "{fs:?}: {f:?} {:?}", r.devices[0].disk);
        assert_eq!(r.devices[0].disk.flush_ios, flushes, "{fs:?}: blkdev_fsync flushes since 2.6.32");
        assert_eq!((f.failed_ops, f.ops), (0, 1), "{fs:?}");
        let d = r.devices[0].disk.clone();
        // Written back in block order and merged: large requests, far fewer than mkfs's calls.
        assert!(d.write_sectors * 512 / d.write_ios > 64 * KIB, "{fs:?}: {d:?}");
        assert!(r.end_ns > 0);
    }
    // ext3 in 2008 zeroes every inode table (64 MiB here) and a 128 MiB journal; ext4 today
    // leaves the tables to the kernel's lazy init and zeroes a 64 MiB journal (80 MiB in all).
    let (old, new) = (mkfs_bytes_of(FsKind::Ext3, Era::Y2008), mkfs_bytes_of(FsKind::Ext4, Era::Today));
    assert!(old > 190 * MIB && new < 90 * MIB, "{old} {new}");
}

/// fio's metadata engine `engine` on file set `set`: one call per file, each an I/O of 4 KiB
/// counted in the job's direction.
fn engine_job(name: &str, engine: FileEngine, set: u32, files: u64) -> JobSpec {
    let mut j = JobSpec::simple(name, RwMode::Read, 4 * KIB, 1, 4 * KIB);
    j.io_limit = files * 4 * KIB;
    j.files = Some(FileAccess { set, direct: false, service: FileService::Roundrobin, end_fsync: false, datasync: false, unlink: false, fadvise: None, program: None, engine: Some(engine), client: None });
    j
}

fn dir_set(name: &str, entries: u64, prealloc: f64) -> FileSetSpec {
    FileSetSpec { dirs: true, ..set(name, entries, 0, prealloc) }
}

fn free_blocks_at_end(r: &SimResult) -> u64 {
    r.files.as_ref().unwrap().free_extents[0].iter().map(|&(_, _, blocks)| blocks).sum()
}

#[test]
fn fio_dircreate_then_dirdelete_counts_each_call_and_gives_every_block_back() {
    let made = vec![engine_job("mk", FileEngine::Dircreate, 0, 64)];
    let r_made = run(&system(FsType::Ext4, KernelEra::Today, vec![dir_set("q", 64, 0.0)], made)).expect("run");
    let mut rm = engine_job("rm", FileEngine::Dirdelete, 0, 64);
    rm.start_after = vec![0];
    let both = vec![engine_job("mk", FileEngine::Dircreate, 0, 64), rm];
    let r_both = run(&system(FsType::Ext4, KernelEra::Today, vec![dir_set("q", 64, 0.0)], both)).expect("run");
    for (r, jobs) in [(&r_made, 1), (&r_both, 2)] {
        for j in &r.jobs[..jobs] {
            // fio's shape: each call an I/O of the job's direction, its time a clat only.
            assert_eq!((j.read.ios, j.read.bytes, j.write.ios), (64, 64 * 4 * KIB, 0), "{}", j.name);
            assert_eq!((j.read.clat.n, j.read.slat.n, j.read.lat.n), (64, 0, 0), "{}", j.name);
            assert!(j.read.clat.min > 0, "a call takes CPU time");
            assert_eq!((j.errors, j.error), (0, 0));
        }
        assert_eq!(r.files.as_ref().unwrap().failed_ops, 0);
    }
    // Each directory has one 4 KiB block: made, then all given back.
    assert_eq!(free_blocks_at_end(&r_both), free_blocks_at_end(&r_made) + 64);
}

#[test]
fn fio_dirdelete_of_a_directory_that_is_not_empty_fails_once_and_stops_the_job() {
    // Directory 1 of the set holds the files of a second set.
    let sets = vec![dir_set("q", 4, 1.0), FileSetSpec { dir: "/q/f00000001".into(), ..set("in", 2, 4 * KIB, 1.0) }];
    let r = run(&system(FsType::Ext4, KernelEra::Today, sets, vec![engine_job("rm", FileEngine::Dirdelete, 0, 4)])).expect("run");
    let j = &r.jobs[0];
    assert_eq!(j.read.ios, 1, "directory 0 removed, then 1 refused");
    assert_eq!((j.errors, j.error), (1, 39), "one failure: ENOTEMPTY");
    assert_eq!(r.files.as_ref().unwrap().failed_ops, 1);
}

#[test]
fn fio_filecreate_filestat_filedelete_make_look_at_and_remove_each_file_once() {
    let mut stat = engine_job("stat", FileEngine::Filestat, 0, 32);
    stat.start_after = vec![0];
    let mut del = engine_job("del", FileEngine::Filedelete, 0, 32);
    del.start_after = vec![1];
    let jobs = vec![engine_job("create", FileEngine::Filecreate, 0, 32), stat, del];
    let r = run(&system(FsType::Ext4, KernelEra::Today, vec![set("f", 32, 0, 0.0)], jobs)).expect("run");
    for j in &r.jobs {
        assert_eq!((j.read.ios, j.read.clat.n, j.read.lat.n, j.errors), (32, 32, 0, 0), "{}", j.name);
    }
    // A second delete finds nothing: ENOENT, as fio's unlink would.
    let jobs = vec![engine_job("del", FileEngine::Filedelete, 0, 32)];
    let r = run(&system(FsType::Ext4, KernelEra::Today, vec![set("f", 32, 0, 0.0)], jobs)).expect("run");
    assert_eq!((r.jobs[0].read.ios, r.jobs[0].errors, r.jobs[0].error), (0, 1, 2));
}

#[test]
fn an_engine_on_the_wrong_kind_of_set_is_refused() {
    let jobs = vec![engine_job("mk", FileEngine::Dircreate, 0, 4)];
    let e = run(&system(FsType::Ext4, KernelEra::Today, vec![set("f", 4, 0, 0.0)], jobs)).unwrap_err();
    assert!(e.to_string().contains("works on directories"), "{e}");
}

#[test]
fn each_file_keeps_its_own_offset_as_fio_does() {
    // rw=read, roundrobin over 4 files: each I/O goes to the next file, at that file's own
    // next offset (fio's last_pos per file): 0, 0, 0, 0, 4k, 4k, 4k, 4k, …
    let mut job = fio_on_files(RwMode::Read, 4 * KIB, 64 * KIB, 12, true);
    job.log_window_ns = Some(0);
    let r = run(&system(FsType::Ext4, KernelEra::Today, vec![set("f", 4, 64 * KIB, 1.0)], vec![job])).expect("run");
    let offsets: Vec<u64> = r.jobs[0].log.iter().map(|rec| rec.4).collect();
    assert_eq!(offsets, [0, 0, 0, 0, 4096, 4096, 4096, 4096, 8192, 8192, 8192, 8192]);
}

/// A file system of `bytes` (with the block size mke2fs picks for it unless `block_size`) on
/// the test's device.
fn sized(mut spec: SimSpec, bytes: u64, block_size: Option<u32>) -> SimSpec {
    let fs = spec.targets[0].filesystem.as_mut().unwrap();
    (fs.size_bytes, fs.block_size) = (Some(bytes), block_size);
    spec
}

#[test]
fn rewriting_a_file_in_place_promises_no_blocks_and_never_runs_out_of_space() {
    // A 40 MiB file on a 64 MiB ext4 rewritten in place, buffered, three times: its blocks are
    // allocated, so delayed allocation promises none of them again (ext4_da_map_blocks finds
    // them mapped). Promising them anew, and never giving that back, ran out of space 14 MiB
    // into the first rewrite.
    for block_size in [Some(4096), Some(1024)] {
        let ops = vec![FileOp::Open { set: 0, pick: Pick::Random }, FileOp::WriteWhole { io_bytes: MIB }, FileOp::Close, FileOp::Sync { set: 0 }];
        let spec = sized(system(FsType::Ext4, KernelEra::Today, vec![set("f", 1, 40 * MIB, 1.0)], vec![program(ops, Some(3))]), 64 * MIB, block_size);
        let r = run(&spec).expect("run");
        let f = r.files.as_ref().unwrap();
        assert_eq!(f.failed_ops, 0, "{block_size:?}: {f:?}");
        assert_eq!(r.jobs[0].write.bytes, 120 * MIB, "{block_size:?}");
        assert_eq!((f.dirtied_pages, f.written_back_pages, f.dirty_pages_at_end), (3 * 10240, 3 * 10240, 0), "{block_size:?}");
        assert_eq!(f.extents_per_file[0].iter().map(|&(_, n)| n).sum::<u64>(), 1, "{block_size:?}: the one file");
    }
}

#[test]
fn promises_end_with_writeback_and_with_the_pages_a_delete_drops() {
    // On a 64 MiB ext4: a 16 MiB file written and fsynced (its promises end as its blocks are
    // allocated), rewritten and fsynced twice (nothing promised), kept; then, five times
    // over, a 32 MiB file written (promised), rewritten while dirty (nothing more promised)
    // and deleted before writeback (its promises end with its pages). Promises made twice,
    // or not ended once, leave no room for the second file.
    for block_size in [Some(4096), Some(1024)] {
        let mut first = vec![FileOp::Create { set: 0, pick: Pick::Random }];
        for _ in 0..3 {
            first.extend([FileOp::WriteWhole { io_bytes: MIB }, FileOp::Fsync { data_only: false }]);
        }
        first.push(FileOp::Close);
        let round = vec![
            FileOp::Create { set: 1, pick: Pick::Random },
            FileOp::WriteWhole { io_bytes: MIB },
            FileOp::Close,
            FileOp::Open { set: 1, pick: Pick::Random },
            FileOp::WriteWhole { io_bytes: MIB },
            FileOp::Delete { set: 1, pick: Pick::Random },
        ];
        let mut rounds = program(round, Some(5));
        rounds.start_after = vec![0];
        let sets = vec![set("k", 1, 16 * MIB, 0.0), set("f", 1, 32 * MIB, 0.0)];
        let spec = sized(system(FsType::Ext4, KernelEra::Today, sets, vec![program(first, Some(1)), rounds]), 64 * MIB, block_size);
        let r = run(&spec).expect("run");
        let f = r.files.as_ref().unwrap();
        assert_eq!(f.failed_ops, 0, "{block_size:?}: {f:?}");
        assert_eq!((r.jobs[0].write.bytes, r.jobs[1].write.bytes), (3 * 16 * MIB, 10 * 32 * MIB), "{block_size:?}");
        assert_eq!(f.dropped_dirty_pages, 5 * 8192, "{block_size:?}: {f:?}");
        assert_eq!(f.dirty_pages_at_end, 0, "{block_size:?}");
        assert_dirty_pages_conserved(f);
    }
}

#[test]
fn writes_allocate_at_once_once_promised_blocks_pass_two_thirds_of_the_free_ones() {
    // ext4_nonda_switch: a 48 MiB file written 4 KiB a call into a 64 MiB ext4 (4 KiB blocks,
    // no writeback before the sync: the cache's thresholds are far above). Free blocks F stay
    // put while pages are promised; once promised blocks pass 2F/3 each write allocates its
    // block at once (free falls by one, promised stays), to the end. On 2 GiB nothing changes.
    let ops = vec![FileOp::Create { set: 0, pick: Pick::Random }, FileOp::WriteWhole { io_bytes: 4 * KIB }, FileOp::Close, FileOp::Sync { set: 0 }];
    let spec = |bytes| sized(system(FsType::Ext4, KernelEra::Today, vec![set("f", 1, 48 * MIB, 0.0)], vec![program(ops.clone(), Some(1))]), bytes, Some(4096));
    let r = run(&spec(64 * MIB)).expect("run");
    let f = r.files.as_ref().unwrap();
    assert_eq!(f.failed_ops, 0, "{f:?}");
    let pages = 48 * MIB / 4096;
    let free_before = free_blocks_at_end(&r) + pages; // the file has no mapping blocks (4 extents fit the inode)
    let promised_then = (2 * free_before).div_ceil(3);
    assert!(f.nonda_writes.abs_diff(pages - promised_then) <= 2, "{} writes fell back, {} expected: {f:?}", f.nonda_writes, pages - promised_then);
    assert_eq!((f.written_back_pages, f.dirty_pages_at_end), (pages, 0));
    let big = run(&spec(2 << 30)).expect("run");
    assert_eq!(big.files.as_ref().unwrap().nonda_writes, 0);
}

#[test]
fn committed_metadata_goes_home_when_it_expires_or_when_the_log_needs_room() {
    // Writers that fsync every file leave nothing dirty for the flusher: what their commits
    // logged still goes home, as the block device's dirty buffers do, once 30 s old
    // (dirty_expire_centisecs), or at once when the log runs short of room.
    let write = vec![FileOp::Create { set: 0, pick: Pick::Rotor }, FileOp::WriteWhole { io_bytes: 4 * KIB }, FileOp::Fsync { data_only: false }, FileOp::Close];
    let cut = |at_s: u64, journal: Option<u32>, loops: u64| {
        let mut spec = system(FsType::Ext4, KernelEra::Today, vec![set("q", 5000, 4 * KIB, 0.0)], vec![program(write.clone(), Some(loops))]);
        spec.targets[0].filesystem.as_mut().unwrap().journal_blocks = journal;
        spec.until = Until::PowerCut { at_ns: at_s * 1_000_000_000 };
        run(&spec).expect("run").files.expect("a file report")
    };
    let early = cut(20, None, 50);
    assert!(early.commits >= 50, "{early:?}");
    assert_eq!(early.checkpoint_blocks, 0, "not yet expired: {early:?}");
    let late = cut(40, None, 50);
    assert!(late.checkpoint_blocks > 0, "{late:?}");
    // 2,000 commits of about seven log blocks in a 1,024-block log.
    let small = cut(20, Some(1024), 2000);
    assert!(small.commits >= 2000 && small.checkpoint_blocks > 0, "{small:?}");
}

/// Three readers (two clones of "r", one "s") of 4 KiB files picked by a Zipf pick.
fn zipf_readers(scattered: bool, entries: u64, interval_ns: Option<u64>) -> SimSpec {
    let ops = vec![FileOp::Open { set: 0, pick: Pick::Zipf { s: 1.0, scattered, ranks: None } }, FileOp::ReadWhole { io_bytes: 4 * KIB }, FileOp::Close];
    let mut jobs = Vec::new();
    for (i, name) in ["r", "r", "s"].into_iter().enumerate() {
        let mut j = program(ops.clone(), Some(400));
        j.name = name.into();
        j.clone = i as u32;
        j.seed = i as u64;
        jobs.push(j);
    }
    let mut spec = system(FsType::Ext4, KernelEra::Today, vec![set("data", entries, 4 * KIB, 1.0)], jobs);
    spec.interval_ns = interval_ns;
    spec
}

#[test]
fn the_samples_running_totals_end_at_the_jobs_operations_and_never_go_back() {
    let r = run(&zipf_readers(false, 2000, Some(1_000_000))).expect("run");
    let f = r.files.as_ref().expect("a file report");
    let counters: Vec<_> = r.samples.iter().map(|s| s.files.as_ref().expect("file counters in every sample")).collect();
    assert!(counters.len() >= 3, "{} samples", counters.len());
    for w in counters.windows(2) {
        assert!(w[1].cache_hits >= w[0].cache_hits && w[1].cache_misses >= w[0].cache_misses);
        for (a, b) in w[0].ops.iter().flatten().zip(w[1].ops.iter().flatten()) {
            assert!(b[0] >= a[0] && b[1] >= a[1], "{a:?} then {b:?}");
        }
    }
    // The series stops at the last whole interval (as sar's does): its totals are the run's
    // less at most the last interval's.
    let last = counters.last().unwrap();
    assert!(last.cache_hits <= f.cache_hits && last.cache_misses <= f.cache_misses);
    assert!(2 * (last.cache_hits + last.cache_misses) > f.cache_hits + f.cache_misses, "{last:?} of {f:?}");
    // Two names: "r" (two clones summed) and "s", in the order they first appear.
    assert_eq!(last.ops.len(), 2);
    for (k, jobs) in [(0, &r.jobs[0..2]), (1, &r.jobs[2..3])] {
        for (op, total) in last.ops[k].iter().enumerate() {
            let ops: u64 = jobs.iter().map(|j| j.file_ops[op].ops).sum();
            let lat: u64 = jobs.iter().map(|j| j.file_ops[op].latency_ns).sum();
            assert!(total[0] <= ops && total[1] <= lat && 2 * total[0] > ops, "job name {k}, operation {op}: {total:?} of {ops}");
        }
    }
    let (r_opens, s_opens) = (last.ops[0][0][0] as f64, last.ops[1][0][0] as f64);
    assert!((1.5..2.5).contains(&(r_opens / s_opens)), "two clones of r opened {r_opens}, one of s {s_opens}");
}

#[test]
fn a_scattered_zipf_pick_keeps_the_popularity_and_refuses_a_set_past_its_prime() {
    // The same popularity, so about as many distinct files (misses) either way (where the
    // hot files lie is the unit tests' of `scattered_entry`).
    let misses = |scattered: bool| {
        let r = run(&zipf_readers(scattered, 4000, None)).expect("run");
        r.files.as_ref().unwrap().cache_misses
    };
    let (plain, scattered) = (misses(false), misses(true));
    let ratio = scattered as f64 / plain as f64;
    assert!((0.8..1.25).contains(&ratio), "misses {plain} plain, {scattered} scattered");
    let bad = {
        let mut spec = zipf_readers(true, 4000, None);
        spec.file_sets[0].entries = ssdlab_core::workload::files::SCATTER_PRIME;
        ssdlab_core::sim::validate(&spec).unwrap_err().to_string()
    };
    assert!(bad.contains("scattered"), "{bad}");
}

/// A system whose one device holds no file system, with a set that is the device itself
/// (fio's `filename=/dev/sda` without `direct=1`).
fn block_device_system(era: KernelEra, job: JobSpec) -> SimSpec {
    let mut spec = system(FsType::Ext4, era, vec![FileSetSpec { block_device: true, ..set("sda", 1, 4 * MIB, 1.0) }], vec![job]);
    spec.targets[0].filesystem = None;
    spec
}

#[test]
fn buffered_reads_of_a_block_device_go_through_its_own_cache_with_read_ahead() {
    // 4 MiB read in 4 KiB calls from the device's start: the device's own page cache reads
    // ahead as a file's does (the same ramps to 128 KiB), and nothing but the data is read
    // or written (no file system: no metadata, no journal).
    let mut job = fio_on_files(RwMode::Read, 4 * KIB, 4 * MIB, 1024, false);
    job.files.as_mut().unwrap().service = FileService::Sequential;
    let r = run(&block_device_system(KernelEra::Today, job)).expect("run");
    let f = r.files.as_ref().unwrap();
    assert_eq!(r.jobs[0].read.ios, 1024);
    // The device goes on past the 4 MiB (a file would end there): the last asynchronous
    // window, up to 128 KiB, is read beyond them.
    let read = device_read_bytes(&r);
    assert!((4 * MIB..=4 * MIB + 128 * KIB).contains(&read), "the device's first 4 MiB read once, and the window ahead: {read}");
    let reqs = r.devices[0].disk.read_ios;
    assert_eq!(reqs, 3 + (read / 4096 - 28).div_ceil(32), "windows of 4, 8, 16, then 32 pages: {reqs}");
    assert_eq!(device_write_bytes(&r), 0);
    assert_eq!(f.metadata_bios, 0, "{f:?}");
    assert_eq!(f.cache_hits + f.cache_misses, 1024, "{f:?}");
}

#[test]
fn buffered_writes_to_a_block_device_are_written_back_in_place_and_fsync_flushes_today() {
    // 4 MiB written in 4 KiB calls, random order, each page once, then fsync (end_fsync):
    // every byte reaches the device where it was written, once, and nothing else does. The
    // fsync flushes the device's cache in today's kernels (blkdev_fsync), not in 2008's.
    for (era, flushes) in [(KernelEra::Today, 1), (KernelEra::Y2008, 0)] {
        let mut job = fio_on_files(RwMode::Randwrite, 4 * KIB, 4 * MIB, 1024, false);
        job.files.as_mut().unwrap().end_fsync = true;
        let r = run(&block_device_system(era, job)).expect("run");
        let f = r.files.as_ref().unwrap();
        assert_eq!(r.jobs[0].write.ios, 1024);
        assert_eq!(f.dirtied_pages, 1024, "{era:?}: {f:?}");
        assert_eq!(device_write_bytes(&r), 4 * MIB, "{era:?}: each page written back once, nothing more");
        assert_eq!(f.written_back_pages, 1024, "{era:?}: {f:?}");
        assert_eq!(device_read_bytes(&r), 0, "{era:?}: whole pages written, none read first");
        assert_eq!((f.metadata_bios, f.failed_ops), (0, 0), "{era:?}: {f:?}");
        assert_eq!(r.devices[0].disk.flush_ios, flushes, "{era:?}");
        assert_dirty_pages_conserved(f);
    }
}

#[test]
fn a_block_device_set_is_refused_where_the_model_has_no_such_path() {
    use ssdlab_core::error::SimError;
    // On a device that holds a file system.
    let job = fio_on_files(RwMode::Read, 4 * KIB, 4 * MIB, 16, false);
    let mut spec = block_device_system(KernelEra::Today, job.clone());
    spec.targets[0].filesystem = Some(FileSystemSpec::new(FsType::Ext4));
    let e = run(&spec).expect_err("a block device set over a file system");
    assert!(matches!(&e, SimError::System(c) if c.to_string().contains("block_device")), "{e}");
    // With a program (a block device is one file: nothing to create or delete).
    let job = program(vec![FileOp::Create { set: 0, pick: Pick::Next }], Some(1));
    let e = run(&block_device_system(KernelEra::Today, job)).expect_err("a program on a block device");
    assert!(e.to_string().contains("block device"), "{e}");
    // More than one entry.
    let mut spec = block_device_system(KernelEra::Today, fio_on_files(RwMode::Read, 4 * KIB, 4 * MIB, 16, false));
    spec.file_sets[0].entries = 2;
    assert!(run(&spec).is_err());
}

#[test]
fn a_write_covering_part_of_an_uncached_block_reads_it_first_and_only_then() {
    // 64 KiB written in 512-byte calls, in order: the first call into each 4 KiB page finds
    // it on disk and not cached, so its block is read before the write (block_write_begin);
    // the next seven find it cached. Whole-page writes read nothing.
    let seq = |bs: u64, ios: u64, spec_for: &dyn Fn(JobSpec) -> SimSpec| {
        let mut job = fio_on_files(RwMode::Write, bs, MIB, ios, false);
        job.files.as_mut().unwrap().service = FileService::Sequential;
        run(&spec_for(job)).expect("run")
    };
    let on_file = |job| system(FsType::Ext4, KernelEra::Today, vec![set("f", 1, MIB, 1.0)], vec![job]);
    let on_device = |job| block_device_system(KernelEra::Today, job);
    for (what, spec_for) in [("ext4 file", &on_file as &dyn Fn(JobSpec) -> SimSpec), ("block device", &on_device)] {
        let r = seq(512, 128, spec_for);
        let f = r.files.as_ref().unwrap();
        assert_eq!(f.partial_block_reads, 16, "{what}: {f:?}");
        assert_eq!(device_read_bytes(&r), 64 * KIB, "{what}: each page read once");
        assert_eq!(f.dirtied_pages, 16, "{what}: {f:?}");
        let r = seq(4 * KIB, 16, spec_for);
        assert_eq!((r.files.as_ref().unwrap().partial_block_reads, device_read_bytes(&r)), (0, 0), "{what}");
    }
}

#[test]
fn a_partial_write_past_the_end_of_a_file_reads_nothing() {
    // Appending 512-byte records to new files: their blocks lie past the end of the file,
    // zeroed rather than read (and unallocated under delayed allocation).
    let ops = vec![FileOp::Create { set: 0, pick: Pick::Next }, FileOp::WriteWhole { io_bytes: 512 }, FileOp::Close];
    for fs in [FsType::Ext4, FsType::Ext3] {
        let spec = system(fs, KernelEra::Today, vec![set("q", 64, 3 * KIB, 0.0)], vec![program(ops.clone(), Some(64))]);
        let r = run(&spec).expect("run");
        let f = r.files.as_ref().unwrap();
        assert_eq!(f.partial_block_reads, 0, "{fs:?}: {f:?}");
    }
}

#[test]
fn a_partial_write_into_a_file_laid_out_unwritten_reads_only_what_was_written_since() {
    // fio lays out a write-only job's file with fallocate: unwritten extents, zeros without
    // I/O. 512-byte writes in order over its first 64 KiB read nothing; over a file written
    // whole they read each of the 16 pages once.
    let mut job = fio_on_files(RwMode::Write, 512, MIB, 128, false);
    job.files.as_mut().unwrap().service = FileService::Sequential;
    let spec = system(FsType::Ext4, KernelEra::Today, vec![FileSetSpec { unwritten: true, ..set("f", 1, MIB, 1.0) }], vec![job.clone()]);
    let r = run(&spec).expect("run");
    assert_eq!((r.files.as_ref().unwrap().partial_block_reads, device_read_bytes(&r)), (0, 0));
    let spec = system(FsType::Ext4, KernelEra::Today, vec![set("f", 1, MIB, 1.0)], vec![job]);
    let r = run(&spec).expect("run");
    assert_eq!(r.files.as_ref().unwrap().partial_block_reads, 16, "written whole: its blocks hold data");
}

#[test]
fn reads_of_a_file_laid_out_unwritten_send_no_io() {
    // A fallocated file never written holds unwritten extents: the kernel reads them as
    // zeros without I/O, buffered or direct. The same file laid out written is read.
    for direct in [false, true] {
        let job = fio_on_files(RwMode::Read, 64 * KIB, MIB, 16, direct);
        let unwritten = system(FsType::Ext4, KernelEra::Today, vec![FileSetSpec { unwritten: true, ..set("f", 1, MIB, 1.0) }], vec![job.clone()]);
        let r = run(&unwritten).expect("run");
        assert_eq!(r.jobs[0].read.bytes, MIB, "direct {direct}: the whole file is read");
        assert_eq!(device_read_bytes(&r), 0, "direct {direct}: unwritten extents read as zeros");
        let written = system(FsType::Ext4, KernelEra::Today, vec![set("f", 1, MIB, 1.0)], vec![job]);
        let r = run(&written).expect("run");
        assert!(device_read_bytes(&r) >= MIB, "direct {direct}: a written file is read from the device");
    }
}

/// IUs read that were never written, over a run's devices and their members.
fn unwritten_read_ius(devices: &[ssdlab_core::report::DeviceResult]) -> u64 {
    devices.iter().map(|d| d.internal.nand.as_ref().map_or(0, |n| n.unwritten_read_ius) + unwritten_read_ius(&d.members)).sum()
}

#[test]
fn files_laid_out_before_the_run_are_on_a_fresh_ssd_and_on_an_arrays_members() {
    // fio writes a read job's files before it starts: the drives hold them, so the job's
    // reads find data (a drive returns zeros for what was never written, without flash).
    // A file set fallocated instead (unwritten) is not written.
    let md = |level: RaidLevel, n: usize| {
        let members = (0..n)
            .map(|i| MemberSpec { name: format!("sd{i}"), device: DriveConfig::NandSsd(SsdConfig::generic(4)), precondition: Precondition::None, scheduler: Default::default(), queue: Default::default() })
            .collect();
        DeviceConfig::Array(ArrayConfig { level, chunk_bytes: 64 * KIB, engine: EngineConfig::Md(MdConfig::default()), members, failures: vec![], spares: vec![], rebuild_limit_bytes: None, verify_data: false })
    };
    let devices = [("ssd", None), ("raid0", Some(md(RaidLevel::Raid0, 3))), ("raid5", Some(md(RaidLevel::Raid5, 4))), ("raid10", Some(md(RaidLevel::Raid10, 4)))];
    for (what, device) in devices {
        for direct in [true, false] {
            let job = fio_on_files(RwMode::Randread, 4 * KIB, 4 * MIB, 2000, direct);
            let mut spec = system(FsType::Ext4, KernelEra::Today, vec![set("f", 4, 4 * MIB, 1.0)], vec![job]);
            if let Some(d) = device.clone() {
                spec.targets[0].device = d;
            }
            let r = run(&spec).expect("run");
            assert!(device_read_bytes(&r) > 0, "{what}, direct {direct}: reads reach the device");
            assert_eq!(unwritten_read_ius(&r.devices), 0, "{what}, direct {direct}: every IU read holds data");
        }
    }
}

#[test]
fn the_journal_thread_waiting_on_a_commit_counts_as_an_active_task() {
    // One writer fsyncing each file on ext3: it waits (uninterruptibly) for its data and
    // then for the commit, during which kjournald waits on the commit's buffers too. The
    // mean count of active tasks exceeds the writer's one.
    let ops = vec![FileOp::Create { set: 0, pick: Pick::Rotor }, FileOp::WriteWhole { io_bytes: 4 * KIB }, FileOp::Fsync { data_only: false }, FileOp::Close];
    let mut spec = system(FsType::Ext3, KernelEra::Y2008, vec![set("q", 200, 8 * KIB, 0.0)], vec![program(ops, Some(200))]);
    spec.targets[0].device = DeviceConfig::Hdd(HddConfig::generic());
    let r = run(&spec).expect("run");
    let f = r.files.as_ref().unwrap();
    assert!(f.commits >= 100, "{} commits", f.commits);
    let active = f.cpu.active;
    assert!(active > 1.2 && active <= 2.0 + 1e-9, "mean active tasks {active}");
}

/// Metadata pages read and metadata bios of `ops` over a set of `files` laid-out 4 KiB files.
fn lookups(fs: FsType, era: KernelEra, files: u64, prealloc: f64, ops: Vec<FileOp>, loops: u64) -> (u64, u64, u64) {
    let r = run(&system(fs, era, vec![set("f", files, 4 * KIB, prealloc)], vec![program(ops, Some(loops))])).expect("run");
    let f = r.files.as_ref().unwrap();
    assert_eq!(f.failed_ops, 0, "{f:?}");
    (f.metadata_read_pages, f.metadata_bios, device_read_bytes(&r))
}

#[test]
fn a_cold_lookup_reads_its_directory_and_inode_blocks_once_and_a_warm_one_nothing() {
    let stat = |pick| vec![FileOp::Stat { set: 0, pick }];
    for (fs, era) in [(FsType::Ext3, KernelEra::Y2008), (FsType::Ext4, KernelEra::Today)] {
        // One pass in order: every directory block and every inode-table block of the
        // 512 files, each once; nothing else is read.
        let (pages, bios, read) = lookups(fs, era, 512, 1.0, stat(Pick::Next), 512);
        assert_eq!(read, pages * 4096, "{fs:?}: only metadata is read");
        // 512 inodes fill 32 blocks of 256-byte inodes (mke2fs's default since 1.41),
        // beside the directory's few.
        let inode_blocks = 32;
        assert!(pages > inode_blocks && pages < inode_blocks + 16, "{fs:?}: {pages} pages");
        if era == KernelEra::Y2008 {
            // ext3's driver reads the one block a lookup misses.
            assert_eq!(bios, pages, "{fs:?}");
        } else {
            // ext4's reads 32 inode-table blocks round a missing one in one go (the
            // window starting with the mount's root inode is in memory before the run).
            assert!(bios < pages - inode_blocks / 2, "{fs:?}: {bios} bios for {pages} pages");
        }
        // Ten times as many lookups at random read nothing more: a name looked up stays
        // in memory, and so do the blocks of its neighbours'.
        let (again, _, _) = lookups(fs, era, 512, 1.0, stat(Pick::Random), 5120);
        assert!(again <= pages, "{fs:?}: {again} pages at random, {pages} in order");
    }
}

#[test]
fn names_made_in_the_run_are_looked_up_without_reading_their_blocks() {
    // 256 files created (their directory blocks and inodes written in memory), then each
    // opened and deleted: only the set's directory, laid out before the run, is read.
    let ops = vec![FileOp::Create { set: 0, pick: Pick::Next }, FileOp::Close];
    let mut make = program(ops, Some(256));
    make.name = "make".into();
    let mut open = program(vec![FileOp::Open { set: 0, pick: Pick::Next }, FileOp::Close, FileOp::Delete { set: 0, pick: Pick::Next }], Some(256));
    open.start_after = vec![0];
    let r = run(&system(FsType::Ext4, KernelEra::Today, vec![set("f", 256, 4 * KIB, 0.0)], vec![make, open])).expect("run");
    let f = r.files.as_ref().unwrap();
    assert_eq!(f.failed_ops, 0, "{f:?}");
    assert_eq!(f.metadata_read_pages, 1, "the directory's one block, at the first create");
}

#[test]
fn a_set_whose_names_are_cached_before_the_run_is_looked_up_without_reading() {
    // A server that opened its files before: their names and inodes are in memory, so
    // stat reads nothing; reading a file's data still goes to the device.
    let cached = |names_cached| FileSetSpec { names_cached, ..set("f", 512, 4 * KIB, 1.0) };
    let stat = vec![FileOp::Stat { set: 0, pick: Pick::Next }];
    let r = run(&system(FsType::Ext4, KernelEra::Today, vec![cached(true)], vec![program(stat.clone(), Some(512))])).expect("run");
    assert_eq!((r.files.as_ref().unwrap().metadata_read_pages, device_read_bytes(&r)), (0, 0));
    let cold = run(&system(FsType::Ext4, KernelEra::Today, vec![cached(false)], vec![program(stat, Some(512))])).expect("run");
    assert!(cold.files.as_ref().unwrap().metadata_read_pages > 32);
    let read = vec![FileOp::Open { set: 0, pick: Pick::Next }, FileOp::ReadWhole { io_bytes: 4 * KIB }, FileOp::Close];
    let r = run(&system(FsType::Ext4, KernelEra::Today, vec![cached(true)], vec![program(read, Some(512))])).expect("run");
    assert_eq!((r.files.as_ref().unwrap().metadata_read_pages, device_read_bytes(&r)), (0, 512 * 4 * KIB));
}

#[test]
fn a_pick_that_finds_every_file_claimed_waits_for_one_as_filebench_does() {
    use ssdlab_core::workload::files::NoFile;
    // Each file in its own directory, laid out before the run and not in memory: every
    // create waits for its directory's block, its entry claimed meanwhile. Near the end the
    // last entries are all claimed by creates under way: a thread picking then waits for
    // one to end (fileset_pick's condition variable) and finds the set full, rather than
    // failing a create that filebench would never have issued.
    let creator = || {
        let mut j = program(vec![FileOp::Create { set: 0, pick: Pick::Rotor }, FileOp::Close], None);
        j.files.as_mut().unwrap().program.as_mut().unwrap().on_no_file = NoFile::EndThread;
        j
    };
    let set = FileSetSpec { dir_width: 1, ..set("f", 16, 0, 0.0) };
    let r = run(&system(FsType::Ext4, KernelEra::Today, vec![set], (0..4).map(|_| creator()).collect())).expect("run");
    let made: u64 = r.jobs.iter().map(|j| j.file_ops[0].ops).sum();
    assert_eq!(made, 16);
    for j in &r.jobs {
        assert_eq!((j.no_file_op, j.file_ops[0].errors), (Some(0), 1), "{:?}", j.file_ops);
    }
    assert_eq!(r.files.as_ref().unwrap().failed_ops, 4);
}

#[test]
fn a_lookup_under_way_makes_a_second_one_of_the_same_name_wait_for_its_read() {
    // Two threads stat the one cold file at once: the blocks are read once, and the second
    // call waits for that read as the first does (the kernel's second lookup waits for the
    // dentry the first is filling), rather than finding the name in memory at once.
    let stat = || program(vec![FileOp::Stat { set: 0, pick: Pick::Random }], Some(1));
    let one = run(&system(FsType::Ext4, KernelEra::Today, vec![set("f", 1, 4 * KIB, 1.0)], vec![stat()])).expect("run");
    let r = run(&system(FsType::Ext4, KernelEra::Today, vec![set("f", 1, 4 * KIB, 1.0)], vec![stat(), stat()])).expect("run");
    let f = r.files.as_ref().unwrap();
    assert_eq!(f.metadata_bios, one.files.as_ref().unwrap().metadata_bios, "{f:?}");
    assert!(f.metadata_bios > 0);
    let lat: Vec<u64> = r.jobs.iter().map(|j| j.file_ops[0].latency_ns).collect();
    // The generic drive's read takes tens of µs; a call that read nothing takes one or two.
    assert!(lat.iter().all(|&l| l > 20_000), "latencies {lat:?} ns");
}

/// One O_DIRECT 4 KiB read at file block `block` of a cold ext3 file of 12 + 1,024 + 1,032
/// blocks (4 KiB), its name in memory: (metadata pages read, metadata bios, the read's
/// latency in ns).
fn cold_read_at(block: u64, maps_cached: bool) -> (u64, u64, f64) {
    let blocks = 12 + 1024 + 1032;
    let set = FileSetSpec { names_cached: true, maps_cached, ..set("big", 1, blocks * 4 * KIB, 1.0) };
    let mut job = fio_on_files(RwMode::Read, 4 * KIB, blocks * 4 * KIB, 1, true);
    (job.region_offset, job.region_size) = (block * 4 * KIB, 4 * KIB);
    let r = run(&system(FsType::Ext3, KernelEra::Y2008, vec![set], vec![job])).expect("run");
    let f = r.files.as_ref().unwrap();
    assert_eq!(r.jobs[0].read.ios, 1);
    assert_eq!(device_read_bytes(&r), (1 + f.metadata_read_pages) * 4 * KIB, "the data and its map, nothing else");
    (f.metadata_read_pages, f.metadata_bios, r.jobs[0].read.clat.mean)
}

#[test]
fn a_cold_read_waits_for_its_files_map_before_its_data() {
    // Block 0 is in the inode's own pointers: the data alone. Block 12 is under the
    // indirect block: that first, then the data. Block 1,040 is under the double-indirect
    // block and its second-level child, read one after the other (ext3_get_branch's
    // sb_bread; here they are neighbours on one die, so the test cannot tell that order
    // from reading both at once): the call takes about three reads' time.
    let (pages, bios, direct) = cold_read_at(0, false);
    assert_eq!((pages, bios), (0, 0));
    let (pages, bios, ind) = cold_read_at(12, false);
    assert_eq!((pages, bios), (1, 1));
    let (pages, bios, dind) = cold_read_at(1040, false);
    assert_eq!((pages, bios), (2, 2));
    assert!(ind > 1.7 * direct && ind < 2.3 * direct, "{ind} against {direct} ns");
    assert!(dind > 2.6 * direct && dind < 3.4 * direct, "{dind} against {direct} ns");
    // A set laid out just before the run (fio's) has its map cached: the data alone.
    let (pages, bios, cached) = cold_read_at(1040, true);
    assert_eq!((pages, bios), (0, 0));
    assert!(cached < 1.2 * direct, "{cached} against {direct} ns");
}

#[test]
fn reads_across_a_files_map_read_each_mapping_block_once() {
    // 2,000 random O_DIRECT reads and then the whole file in order, buffered, over a cold
    // file of 12 + 1,024 + 1,032 blocks: its indirect block, the double-indirect block and
    // its two children are read once each, whatever reaches them first.
    let blocks = 12 + 1024 + 1032;
    let set = FileSetSpec { names_cached: true, ..set("big", 1, blocks * 4 * KIB, 1.0) };
    let random = fio_on_files(RwMode::Randread, 4 * KIB, blocks * 4 * KIB, 2000, true);
    let mut seq = fio_on_files(RwMode::Read, 64 * KIB, blocks * 4 * KIB, blocks / 16, false);
    seq.start_after = vec![0];
    let r = run(&system(FsType::Ext3, KernelEra::Y2008, vec![set], vec![random, seq])).expect("run");
    let f = r.files.as_ref().unwrap();
    assert_eq!((f.metadata_read_pages, f.metadata_bios), (4, 4), "{f:?}");
}

#[test]
fn zipf_offsets_need_an_exponent_above_zero() {
    use ssdlab_core::workload::files::ZipfSlots;
    let read = FileOp::Read { io_bytes: 4 * KIB, random: false, zipf: Some(ZipfSlots { s: 0.0, scattered: true }) };
    let ops = vec![FileOp::Open { set: 0, pick: Pick::Random }, read, FileOp::Close];
    let err = run(&system(FsType::Ext4, KernelEra::Today, vec![set("f", 1, MIB, 1.0)], vec![program(ops, Some(1))])).expect_err("refused");
    let msg = err.to_string();
    assert!(msg.contains("files.program.ops.1") && msg.contains("Zipf offsets need an exponent above 0"), "{msg}");
}

#[test]
fn a_buffered_overwrite_of_a_cold_file_reads_the_blocks_mapping_it_first() {
    // write_begin's get_block: ext3 walks the chain of the blocks it writes (and ext4's
    // delayed allocation looks them up), reading what the cache lacks before the write goes
    // on. One 4 KiB overwrite at block 1,040 of the cold 12 + 1,024 + 1,032-block file.
    let blocks = 12 + 1024 + 1032;
    let write_at = |maps_cached: bool| {
        let set = FileSetSpec { names_cached: true, maps_cached, ..set("big", 1, blocks * 4 * KIB, 1.0) };
        let mut job = fio_on_files(RwMode::Write, 4 * KIB, blocks * 4 * KIB, 1, false);
        (job.region_offset, job.region_size) = (1040 * 4 * KIB, 4 * KIB);
        let r = run(&system(FsType::Ext3, KernelEra::Y2008, vec![set], vec![job])).expect("run");
        let f = r.files.as_ref().unwrap().clone();
        assert_eq!(r.jobs[0].write.ios, 1);
        (f.metadata_read_pages, r.jobs[0].write.clat.mean)
    };
    let (cold, cold_ns) = write_at(false);
    let (warm, warm_ns) = write_at(true);
    assert_eq!((cold, warm), (2, 0), "the double-indirect block and its child");
    assert!(cold_ns > 10.0 * warm_ns, "{cold_ns} against {warm_ns} ns: the cold write waited for two reads");
}
