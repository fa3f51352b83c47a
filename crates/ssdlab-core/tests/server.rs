//! A download server: threads that send files (sendfile through the page cache) to clients
//! over the server's NIC; what bounds it — the clients' lines, the NIC, the disk — and the
//! books kept (bytes conserved from the files to the clients, no link over its rate).

mod common;

use ssdlab_core::device::ssd::{Precondition, SsdConfig};
use ssdlab_core::file::{FileSystemSpec, FsType, KernelEra, MemoryConfig};
use ssdlab_core::host::HostConfig;
use ssdlab_core::net::{BondConfig, BondMode, ClientClass, ClientRef, HashPolicy, LinkConfig, NetCosts, NetworkSpec};
use ssdlab_core::report::SimResult;
use ssdlab_core::sim::{run, SimSpec};
use ssdlab_core::target::{DeviceConfig, TargetSpec};
use ssdlab_core::workload::files::{FileOp, FileSetSpec, Pick, SizeSpec};
use ssdlab_core::workload::JobSpec;

const MIB: u64 = 1 << 20;
const S: u64 = 1_000_000_000;

fn class(name: &str, count: u32, line: f64) -> ClientClass {
    ClientClass { name: name.into(), count, line_bytes_per_s: line, rtt_ns: 20_000_000, window_bytes: 4 * MIB }
}

/// One thread per client: open a file by popularity, send it whole in 64 KiB calls, close.
fn clients(classes: &[ClientClass], runtime: u64, pick: Pick) -> Vec<JobSpec> {
    let mut jobs = Vec::new();
    for (c, k) in classes.iter().enumerate() {
        for i in 0..k.count {
            let ops = vec![FileOp::Open { set: 0, pick }, FileOp::SendWhole { io_bytes: 64 * 1024, midway: false }, FileOp::Close];
            let mut j = common::file_program(ops, None);
            j.name = k.name.clone();
            j.clone = i;
            j.seed = jobs.len() as u64;
            j.runtime_ns = Some(runtime);
            j.time_based = true;
            j.files.as_mut().unwrap().client = Some(ClientRef { class: c as u32, index: i });
            jobs.push(j);
        }
    }
    jobs
}

fn server(device: DeviceConfig, links: usize, classes: Vec<ClientClass>, files: u64, file_bytes: u64, runtime: u64) -> SimSpec {
    server_picking(device, links, classes, files, file_bytes, runtime, Pick::Zipf { s: 0.8, scattered: false, ranks: None })
}

fn server_picking(device: DeviceConfig, links: usize, classes: Vec<ClientClass>, files: u64, file_bytes: u64, runtime: u64, pick: Pick) -> SimSpec {
    server_with(device, BondConfig::new(BondMode::Ieee8023ad, HashPolicy::Layer34, links, LinkConfig::gbe(1)), classes, files, file_bytes, runtime, pick)
}

fn server_with(device: DeviceConfig, nic: BondConfig, classes: Vec<ClientClass>, files: u64, file_bytes: u64, runtime: u64, pick: Pick) -> SimSpec {
    let mut host = HostConfig::ideal();
    host.memory = Some(MemoryConfig::new(KernelEra::Y2008, 1 << 30, 4));
    let target = TargetSpec {
        name: "md0".into(),
        device,
        precondition: Precondition::None,
        scheduler: Default::default(),
        queue: Default::default(),
        filesystem: Some(FileSystemSpec::new(FsType::Ext3)),
    };
    let set = FileSetSpec { name: "catalogue".into(), target: 0, dir: "/www".into(), entries: files, size: SizeSpec::Fixed { bytes: file_bytes }, dir_width: 0, prealloc: 1.0, dirs: false, block_device: false, unwritten: false, names_cached: false, maps_cached: false };
    let network = NetworkSpec {
        nic,
        costs: NetCosts::default(),
        sendfile: true,
        clients: classes.clone(),
        send_buffer_windows: 0.0,
    };
    SimSpec {
        seed: 7,
        host,
        targets: vec![target],
        jobs: clients(&classes, runtime, pick),
        interval_ns: None,
        until: Default::default(),
        limits: Default::default(),
        file_sets: vec![set],
        network: Some(network),
    }
}

fn net(r: &SimResult) -> &ssdlab_core::net::NetworkReport {
    r.network.as_ref().expect("a network report")
}

/// Bytes conserved: what the jobs read for sending is what the NIC sent and what the clients
/// received; no port or line carried more than its rate allows.
fn check_books(r: &SimResult) {
    let n = net(r);
    let sent_by_jobs: u64 = r.jobs.iter().map(|j| j.read.bytes).sum();
    assert!((n.bytes_sent - sent_by_jobs as f64).abs() < 1.0, "NIC {} vs jobs {}", n.bytes_sent, sent_by_jobs);
    let received: f64 = n.classes.iter().map(|c| c.bytes).sum();
    assert!((received - n.bytes_sent).abs() < 1.0, "clients {received} vs NIC {}", n.bytes_sent);
    for p in &n.nic {
        assert!(p.utilisation <= 1.0 + 1e-9, "{p:?}");
    }
    for c in &n.classes {
        assert!(c.max_bytes_per_s <= c.line_bytes_per_s * (1.0 + 1e-9), "{c:?}");
    }
}

/// Slow lines and files the page cache holds: every client gets its line's rate, and the
/// NIC carries their sum.
#[test]
fn slow_clients_get_their_lines() {
    let classes = vec![class("adsl", 20, 600e3), class("light", 5, 6e6)];
    let r = run(&server(DeviceConfig::NandSsd(SsdConfig::generic(4)), 2, classes, 8, 8 * MIB, 20 * S)).expect("run");
    check_books(&r);
    let n = net(&r);
    for c in &n.classes {
        // Each waits a little between calls (CPU, the next read), so a little under its line.
        assert!(c.mean_bytes_per_s > 0.9 * c.line_bytes_per_s, "{c:?}");
        assert!(c.lines_saturated_share > 0.8, "{c:?}");
    }
    let expect = 20.0 * 600e3 + 5.0 * 6e6;
    assert!((n.bytes_per_s - expect).abs() < 0.1 * expect, "{} vs {expect}", n.bytes_per_s);
    assert!(n.nic.iter().all(|p| p.saturated_share < 0.01), "{:?}", n.nic);
}

/// Fast clients and a fast drive: the NIC bounds the server. One 1 GbE port (the active one
/// of an active-backup pair) carries its goodput.
#[test]
fn fast_clients_fill_the_port() {
    let goodput = LinkConfig::gbe(1).goodput_bytes_per_s();
    let nic = BondConfig::new(BondMode::ActiveBackup, HashPolicy::Layer2, 2, LinkConfig::gbe(1));
    let r = run(&server_with(DeviceConfig::NandSsd(SsdConfig::generic(8)), nic, vec![class("fibre", 16, 60e6)], 4, 64 * MIB, 10 * S, Pick::Zipf { s: 0.8, scattered: false, ranks: None })).expect("run");
    check_books(&r);
    let n = net(&r);
    assert!(n.bytes_per_s > 0.98 * goodput && n.bytes_per_s <= goodput, "{} vs {goodput}", n.bytes_per_s);
    assert!(n.nic[0].saturated_share > 0.98 && n.nic[1].bytes == 0.0, "{:?}", n.nic);
    assert!(n.classes[0].lines_saturated_share < 0.01, "{:?}", n.classes);
}

/// The same under 802.3ad over two ports: each download is a connection of its own, hashed
/// (layer3+4) to one port. Four clients whose lines (60 MB/s) would fill both ports if two
/// sat on each: more than one port's worth goes out, but not two, since the hash puts three
/// or four on one port as often as not, and connections on the busier port are slower, so
/// they stay longer and more of them are there at any moment. (Seeds 1-10: 1.16-1.52 ports'
/// worth. With 16 such clients both ports nearly always hold two or more and are full.)
#[test]
fn a_hashed_bond_carries_less_than_its_ports() {
    let goodput = LinkConfig::gbe(1).goodput_bytes_per_s();
    let r = run(&server(DeviceConfig::NandSsd(SsdConfig::generic(8)), 2, vec![class("fibre", 4, 60e6)], 4, 64 * MIB, 10 * S)).expect("run");
    check_books(&r);
    let n = net(&r);
    assert!(n.bytes_per_s > 1.05 * goodput && n.bytes_per_s < 1.75 * goodput, "{} vs 2 × {goodput}", n.bytes_per_s);
    let busiest = n.nic.iter().map(|p| p.saturated_share).fold(0.0, f64::max);
    assert!(busiest > 0.9, "{:?}", n.nic);
}

/// A single 7200 rpm disk behind the same clients, each downloading files at random from a
/// catalogue four times the page cache: the disk bounds it. The NIC sits mostly idle and the
/// threads wait for I/O.
#[test]
fn a_disk_bounds_a_server_whose_files_the_cache_cannot_hold() {
    let r = run(&server_picking(DeviceConfig::Hdd(common::barracuda()), 2, vec![class("fibre", 32, 60e6)], 64, 64 * MIB, 20 * S, Pick::Random)).expect("run");
    check_books(&r);
    let n = net(&r);
    let disk = 200e6; // no 2008 disk streams faster than this, and seeks between 32 streams cost
    assert!(n.bytes_per_s < disk, "{}", n.bytes_per_s);
    assert!(n.nic.iter().all(|p| p.utilisation < 0.5), "{:?}", n.nic);
    let cpu = r.files.as_ref().unwrap().cpu;
    assert!(cpu.iowait > 0.5, "threads wait for the disk: {cpu:?}");
    assert!(r.files.as_ref().unwrap().cache_misses > 0);
    // Readers wait for the pages read ahead of them: none runs ahead of the disk, so the run
    // ends with its runtime, and the disk's queue holds about a window or two per reader.
    assert!(r.end_ns - r.start_ns < 21 * S, "{} ns", r.end_ns - r.start_ns);
    let queued = r.devices[0].disk.in_flight_area_ns as f64 / (r.end_ns - r.start_ns) as f64;
    assert!(queued < 2.0 * 32.0, "{queued} requests queued on average");
}

/// Same seed, same run; the network's CPU is charged to the host.
#[test]
fn a_server_run_is_deterministic_and_charges_its_cpu() {
    let spec = server(DeviceConfig::NandSsd(SsdConfig::generic(4)), 2, vec![class("adsl", 10, 600e3)], 8, 4 * MIB, 5 * S);
    let a = serde_json::to_string(&run(&spec).unwrap()).unwrap();
    let b = serde_json::to_string(&run(&spec).unwrap()).unwrap();
    assert_eq!(a, b);
    let r = run(&spec).unwrap();
    let n = net(&r);
    assert_eq!(n.cpu_ns, n.calls * 2_000 + n.packets * 2_500);
    assert!(n.calls > 0 && n.packets >= n.calls);
}

/// Bad input is one line naming the key.
#[test]
fn a_thread_without_a_client_or_a_client_without_a_class_is_refused() {
    let mut spec = server(DeviceConfig::NandSsd(SsdConfig::generic(4)), 2, vec![class("adsl", 2, 600e3)], 8, MIB, S);
    spec.jobs[1].files.as_mut().unwrap().client = Some(ClientRef { class: 0, index: 2 });
    let e = run(&spec).unwrap_err().to_string();
    assert!(e.contains("files.client") && e.contains("has 2"), "{e}");
    spec.jobs[1].files.as_mut().unwrap().client = None;
    let e = run(&spec).unwrap_err().to_string();
    assert!(e.contains("send_whole") && e.contains("names none"), "{e}");
    let mut spec = server(DeviceConfig::NandSsd(SsdConfig::generic(4)), 2, vec![class("adsl", 2, 600e3)], 8, MIB, S);
    spec.network.as_mut().unwrap().clients[0].window_bytes = 0;
    assert!(run(&spec).unwrap_err().to_string().contains("network.clients.0.window_bytes"));
}

/// A file is sent once, whole: a client that fetches one 1 MiB file in 64 KiB calls makes 16
/// calls and receives 1 MiB.
#[test]
fn a_file_is_sent_whole_once() {
    let mut spec = server(DeviceConfig::NandSsd(SsdConfig::generic(4)), 2, vec![class("adsl", 1, 600e3)], 1, MIB, 60 * S);
    let p = spec.jobs[0].files.as_mut().unwrap().program.as_mut().unwrap();
    p.loops = Some(1);
    spec.jobs[0].time_based = false;
    let r = run(&spec).expect("run");
    check_books(&r);
    assert_eq!((r.jobs[0].read.ios, r.jobs[0].read.bytes), (16, MIB));
    assert_eq!(net(&r).calls, 16);
}

/// Clients met part-way through their downloads (`midway`): each thread's first send starts at
/// a whole number of calls into its file, spread over the file; later files start at their
/// start. Without it every first download starts at byte 0.
#[test]
fn midway_clients_start_their_first_download_part_way_through() {
    let first_sends = |midway: bool| {
        let mut spec = server(DeviceConfig::NandSsd(SsdConfig::generic(4)), 2, vec![class("light", 24, 6e6)], 4, 8 * MIB, 60 * S);
        for j in &mut spec.jobs {
            let p = j.files.as_mut().unwrap().program.as_mut().unwrap();
            p.ops[1] = FileOp::SendWhole { io_bytes: 64 * 1024, midway };
            p.loops = Some(1);
        }
        let r = run(&spec).expect("run");
        check_books(&r);
        r.jobs.iter().map(|j| j.read.bytes).collect::<Vec<u64>>()
    };
    let whole = first_sends(false);
    assert!(whole.iter().all(|&b| b == 8 * MIB), "{whole:?}");
    let part = first_sends(true);
    assert!(part.iter().all(|&b| b > 0 && b <= 8 * MIB && b % (64 * 1024) == 0), "{part:?}");
    let distinct: std::collections::BTreeSet<u64> = part.iter().copied().collect();
    assert!(distinct.len() >= 12, "the starts are spread: {part:?}");
    let mean = part.iter().sum::<u64>() as f64 / part.len() as f64;
    assert!((0.3..0.7).contains(&(mean / (8 * MIB) as f64)), "on average about half a file left: {mean}");
}

/// A socket send buffer keeps a slow line sending while its thread reads the next part from
/// a disk: ADSL clients of files the cache cannot hold get more of their line with two
/// windows of buffer than with none, and the bytes the threads read are those sent plus
/// those still queued at the end (at most a buffer per client).
#[test]
fn a_send_buffer_keeps_a_slow_line_busy_while_its_thread_reads() {
    let classes = vec![ClientClass { name: "adsl".into(), count: 64, line_bytes_per_s: 600e3, rtt_ns: 30_000_000, window_bytes: 65_536 }];
    let run_with = |windows: f64| {
        let mut spec = server_picking(DeviceConfig::Hdd(common::barracuda()), 2, classes.clone(), 64, 64 * MIB, 10 * S, Pick::Random);
        spec.network.as_mut().unwrap().send_buffer_windows = windows;
        run(&spec).expect("run")
    };
    let (plain, buffered) = (run_with(0.0), run_with(2.0));
    check_books(&plain);
    let rate = |r: &SimResult| net(r).classes[0].mean_bytes_per_s;
    // Read-ahead already keeps most reads ahead of the sender, so the gain is small; the
    // flows are far fewer (a flow-set change costs the flow model a recomputation).
    assert!(rate(&buffered) > rate(&plain), "{} vs {} B/s", rate(&buffered), rate(&plain));
    assert_eq!(net(&plain).flows, net(&plain).calls);
    assert!(net(&buffered).flows * 10 < net(&buffered).calls, "{} flows for {} calls", net(&buffered).flows, net(&buffered).calls);
    assert!(rate(&buffered) <= 600e3 * (1.0 + 1e-9));
    let read: u64 = buffered.jobs.iter().map(|j| j.read.bytes).sum();
    let sent = net(&buffered).bytes_sent;
    assert!(sent <= read as f64 + 1.0 && read as f64 - sent <= 64.0 * 2.0 * 65_536.0 + 1.0, "read {read}, sent {sent}");
}

/// A time series carries what the network had sent at each sample: per port and per class,
/// never falling, summing to the run's report at the end; and taking samples leaves the run
/// as it is without them (the samples are worked out on a copy of the flows).
#[test]
fn samples_carry_the_network_without_changing_the_run() {
    let classes = vec![class("adsl", 12, 600e3), class("fibre", 4, 60e6)];
    let plain = server(DeviceConfig::NandSsd(SsdConfig::generic(4)), 2, classes, 16, 64 * MIB, 6 * S);
    let mut sampled = plain.clone();
    sampled.interval_ns = Some(S / 2);
    let (a, b) = (run(&plain).expect("run"), run(&sampled).expect("run"));
    assert!(a.samples.is_empty());
    let strip = |r: &SimResult| {
        let mut v = serde_json::to_value(r).unwrap();
        // The samples themselves, and the events that took them.
        v.as_object_mut().unwrap().remove("samples");
        v.as_object_mut().unwrap().remove("events");
        v
    };
    let (x, y) = (strip(&a), strip(&b));
    let differ: Vec<&String> = x.as_object().unwrap().iter().filter(|(k, v)| y.get(k.as_str()) != Some(v)).map(|(k, _)| k).collect();
    assert!(differ.is_empty(), "sampling changed the run's {differ:?}");
    let n = net(&b);
    let series: Vec<_> = b.samples.iter().map(|s| s.network.clone().expect("a network sample")).collect();
    assert!(series.len() >= 12, "{} samples", series.len());
    for w in series.windows(2) {
        for (x, y) in w[0].nic_bytes.iter().zip(&w[1].nic_bytes).chain(w[0].class_bytes.iter().zip(&w[1].class_bytes)) {
            assert!(y >= x, "a counter fell: {:?} then {:?}", w[0], w[1]);
        }
    }
    // Each sample's ports and classes carry the same bytes (what leaves is what arrives).
    for s in &series {
        let (nic, classes): (f64, f64) = (s.nic_bytes.iter().sum(), s.class_bytes.iter().sum());
        assert!((nic - classes).abs() < 1.0, "{s:?}");
    }
    // The last sample comes before the run's end: what is sent after it is at most what the
    // ports (and the lines) carry in the time left.
    let last = series.last().unwrap();
    let left_s = (b.end_ns - b.samples.last().unwrap().t_ns) as f64 / S as f64;
    for (p, bytes) in n.nic.iter().zip(&last.nic_bytes) {
        let after = p.bytes - bytes;
        assert!(after > -1.0 && after <= p.capacity_bytes_per_s * left_s + 1.0, "port {}: {bytes} sampled, {} at the end", p.name, p.bytes);
    }
    for (c, bytes) in n.classes.iter().zip(&last.class_bytes) {
        let after = c.bytes - bytes;
        assert!(after > -1.0 && after <= c.line_bytes_per_s * c.count as f64 * left_s + 1.0, "class {}: {bytes} sampled, {} at the end", c.name, c.bytes);
    }
    // The fibre clients' 60 MB/s lines fill in the series as in the report: their class is
    // sent more in each full interval than the twelve 600 kB/s ADSL clients can take.
    let mid = &series[series.len() / 2];
    let early = &series[1];
    assert!(mid.class_bytes[1] - early.class_bytes[1] > mid.class_bytes[0] - early.class_bytes[0]);
}
