//! Drives carried from one run to the next (`sim::Carry`): the second run starts from the
//! state the first left (what it wrote reads back as written, its blocks stay used), with its
//! own counters; a damaged state is refused with one line naming its file.

use std::fs;
use std::path::PathBuf;

use ssdlab_core::device::ssd::{Precondition, SsdConfig};
use ssdlab_core::host::HostConfig;
use ssdlab_core::progress::Watch;
use ssdlab_core::report::SimResult;
use ssdlab_core::sim::{run_carried, Carry, Until};
use ssdlab_core::target::{DeviceConfig, TargetSpec};
use ssdlab_core::workload::{JobSpec, RwMode};
use ssdlab_core::{SimError, SimSpec};

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ssdlab-carry-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&d);
    d
}

fn spec(rw: RwMode) -> SimSpec {
    let target = TargetSpec {
        filesystem: None,
        name: "sda".into(),
        device: DeviceConfig::NandSsd(SsdConfig::generic(1)),
        precondition: Precondition::None,
        scheduler: Default::default(),
        queue: Default::default(),
    };
    SimSpec {
        file_sets: Vec::new(),
        network: None,
        seed: 1,
        host: HostConfig::ideal(),
        targets: vec![target],
        jobs: vec![JobSpec::simple("j", rw, 128 << 10, 16, 32 << 20)],
        interval_ns: None,
        until: Until::JobsDone,
        limits: Default::default(),
    }
}

fn run(rw: RwMode, carry: Option<&Carry>) -> Result<SimResult, SimError> {
    run_carried(&spec(rw), &mut Watch::off(), None, carry)
}

/// (IUs read that were never written, free blocks, media bytes written) of the run's drive.
fn drive_state(r: &SimResult) -> (u64, u64, u64) {
    let d = &r.devices[0].internal;
    let nand = d.nand.as_ref().unwrap();
    (nand.unwritten_read_ius, nand.free_blocks, d.media_bytes_written)
}

#[test]
fn a_carried_drive_starts_where_the_last_run_left_it() {
    let d = dir("starts");
    let carry = Carry::new(&d);
    let fresh = drive_state(&run(RwMode::Read, None).unwrap());
    assert!(fresh.0 > 0, "a fresh drive's reads find nothing written");
    let written = run(RwMode::Write, Some(&carry)).unwrap();
    assert!(d.join("sda.ftl").exists());
    let (unwritten, free, media) = drive_state(&run(RwMode::Read, Some(&carry)).unwrap());
    assert_eq!(unwritten, 0, "the second run reads what the first wrote");
    assert!(free < fresh.1, "the first run's blocks stay used: {free} free of a fresh drive's {}", fresh.1);
    // Its counters are its own: a read run programs nothing, whatever came before.
    assert_eq!(media, 0);
    assert!(drive_state(&written).2 > 0);
    let _ = fs::remove_dir_all(&d);
}

#[test]
fn a_damaged_carried_state_is_refused_naming_its_file() {
    let d = dir("damaged");
    let carry = Carry::new(&d);
    run(RwMode::Write, Some(&carry)).unwrap();
    let path = d.join("sda.ftl");
    let mut bytes = fs::read(&path).unwrap();
    bytes.truncate(bytes.len() / 2);
    fs::write(&path, &bytes).unwrap();
    let e = run(RwMode::Read, Some(&carry)).unwrap_err().to_string();
    assert!(e.contains("carry_states") && e.contains("sda.ftl") && e.contains("cut short"), "{e}");
    fs::write(&path, b"something else").unwrap();
    let e = run(RwMode::Read, Some(&carry)).unwrap_err().to_string();
    assert!(e.contains("not a carried drive state"), "{e}");
    let _ = fs::remove_dir_all(&d);
}
