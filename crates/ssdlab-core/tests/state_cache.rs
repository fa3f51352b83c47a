//! A drive's preconditioned state kept on disk: restored, it is the very state preconditioning
//! leaves, and a run from it gives the same result; an entry that is cut short, changed, or
//! another drive's is preconditioned again; the cache tidies itself.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use ssdlab_core::device::ssd::ftl::Ftl;
use ssdlab_core::device::ssd::state_cache::Lookup;
use ssdlab_core::device::ssd::{precondition, Precondition, Ssd, SsdConfig, StateCache};
use ssdlab_core::host::HostConfig;
use ssdlab_core::progress::{Flow, Progress, Watch};
use ssdlab_core::sim::{run_kept, Until};
use ssdlab_core::target::{DeviceConfig, TargetSpec};
use ssdlab_core::workload::{JobSpec, RwMode};
use ssdlab_core::SimSpec;

const RANDOM: Precondition = Precondition::Random { passes: 1.0 };

/// A directory of its own for each test, emptied first.
fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ssdlab-state-cache-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&d);
    d
}

fn drive() -> SsdConfig {
    SsdConfig::generic(1)
}

fn preconditioned_ftl(seed: u64) -> Ftl {
    let mut ssd = Ssd::new(drive(), seed).unwrap();
    precondition(&mut ssd, RANDOM, seed);
    ssd.ftl().clone()
}

fn entries(d: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = fs::read_dir(d)
        .map(|r| r.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "ftl")).collect())
        .unwrap_or_default();
    v.sort();
    v
}

#[test]
fn a_saved_state_restores_to_the_same_ftl() {
    let done = preconditioned_ftl(3);
    let mut bytes = Vec::new();
    done.save_state(&mut bytes).unwrap();
    let mut fresh = Ftl::new(&drive());
    assert!(fresh != done);
    fresh.restore_state(&mut bytes.as_slice()).unwrap();
    assert!(fresh == done, "the restored FTL differs from the preconditioned one");
}

#[test]
fn a_damaged_state_is_refused_with_its_reason() {
    let done = preconditioned_ftl(3);
    let mut bytes = Vec::new();
    done.save_state(&mut bytes).unwrap();
    let refuse = |b: &[u8]| Ftl::new(&drive()).restore_state(&mut &b[..]).unwrap_err().0;
    assert_eq!(refuse(&bytes[..bytes.len() / 2]), "cut short");
    let mut changed = bytes.clone();
    let mid = changed.len() / 2;
    changed[mid] ^= 1;
    assert_eq!(refuse(&changed), "its checksum does not match its contents");
    let mut longer = bytes.clone();
    longer.push(0);
    assert_eq!(refuse(&longer), "bytes after its end");
    // Another drive's state: its maps are of another size.
    let mut other = drive();
    other.capacity_bytes /= 2;
    let msg = Ftl::new(&other).restore_state(&mut bytes.as_slice()).unwrap_err().0;
    assert!(msg.contains("logical map"), "{msg}");
}

fn spec(seed: u64, pre: Precondition) -> SimSpec {
    let target = TargetSpec {
        filesystem: None,
        name: "sda".into(),
        device: DeviceConfig::NandSsd(drive()),
        precondition: pre,
        scheduler: Default::default(),
        queue: Default::default(),
    };
    let mut job = JobSpec::simple("j", RwMode::Randrw, 4096, 16, 256 << 20);
    job.number_ios = Some(20_000);
    SimSpec {
        file_sets: Vec::new(),
        network: None,
        seed,
        host: HostConfig::ideal(),
        targets: vec![target],
        jobs: vec![job],
        interval_ns: None,
        until: Until::JobsDone,
        limits: Default::default(),
    }
}

/// The run's result as JSON, and whether its drive was restored rather than preconditioned.
fn run(spec: &SimSpec, states: Option<&StateCache>) -> (String, bool) {
    let mut restored = false;
    let mut see = |p: &Progress| {
        restored |= p.precondition.as_ref().is_some_and(|c| c.restored);
        Flow::Continue
    };
    let r = run_kept(spec, &mut Watch::new(&mut see).every(Duration::ZERO), states).unwrap();
    (serde_json::to_string(&r).unwrap(), restored)
}

#[test]
fn a_run_from_a_kept_state_gives_the_same_result() {
    let d = dir("same");
    let cache = StateCache::new(&d);
    let s = spec(5, RANDOM);
    let (plain, _) = run(&s, None);
    let (first, restored) = run(&s, Some(&cache));
    assert!(!restored);
    assert_eq!(entries(&d).len(), 1, "the first run keeps its drive's state");
    let (second, restored) = run(&s, Some(&cache));
    assert!(restored, "the second run reads the state back");
    assert_eq!(first, plain);
    assert_eq!(second, plain);
    // Another seed is another state, kept beside the first.
    let (_, restored) = run(&spec(6, RANDOM), Some(&cache));
    assert!(!restored);
    assert_eq!(entries(&d).len(), 2);
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_sequential_fill_is_not_kept() {
    let d = dir("sequential");
    let (_, restored) = run(&spec(5, Precondition::Sequential), Some(&StateCache::new(&d)));
    assert!(!restored);
    assert!(entries(&d).is_empty());
    let _ = fs::remove_dir_all(&d);
}

#[test]
fn a_damaged_entry_is_preconditioned_again_and_replaced() {
    let d = dir("damaged");
    let cache = StateCache::new(&d);
    let mut ftl = Ftl::new(&drive());
    assert_eq!(cache.restore(&drive(), RANDOM, 9, &mut ftl), Lookup::Missing);
    let done = preconditioned_ftl(9);
    cache.store(&drive(), RANDOM, 9, &done).unwrap();
    let path = entries(&d).pop().unwrap();
    let whole = fs::read(&path).unwrap();
    for (what, bytes) in [
        ("cut", whole[..whole.len() - 100].to_vec()),
        ("empty", Vec::new()),
        ("flipped", {
            let mut b = whole.clone();
            let at = b.len() - 1000;
            b[at] ^= 0x40;
            b
        }),
    ] {
        fs::write(&path, &bytes).unwrap();
        let mut ftl = Ftl::new(&drive());
        let found = cache.restore(&drive(), RANDOM, 9, &mut ftl);
        assert!(matches!(found, Lookup::Damaged(_)), "{what}: {found:?}");
        assert!(ftl == Ftl::new(&drive()), "{what}: a damaged entry leaves the FTL fresh");
    }
    // The entry of another key under this one's name (as if their hashes collided).
    let mut other = drive();
    other.controller.busy_cv = 0.25;
    cache.store(&other, RANDOM, 9, &done).unwrap();
    let other_path = entries(&d).into_iter().find(|p| *p != path).unwrap();
    fs::rename(&other_path, &path).unwrap();
    let found = cache.restore(&drive(), RANDOM, 9, &mut Ftl::new(&drive()));
    assert!(matches!(&found, Lookup::Damaged(why) if why.contains("another drive")), "{found:?}");
    // A run over the damaged entry gives the plain result and stores a whole entry.
    fs::write(&path, &whole[..10]).unwrap();
    let s = spec(9, RANDOM);
    let (plain, _) = run(&s, None);
    let (again, restored) = run(&s, Some(&cache));
    assert!(!restored);
    assert_eq!(again, plain);
    let mut ftl = Ftl::new(&drive());
    let target_seed = ssdlab_core::sim::target_seed(9, 0);
    assert_eq!(cache.restore(&drive(), RANDOM, target_seed, &mut ftl), Lookup::Restored);
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn the_cache_drops_other_builds_leftovers_and_the_least_recently_used() {
    let d = dir("tidy");
    fs::create_dir_all(&d).unwrap();
    let foreign = d.join("00000000-0123456789abcdef.ftl");
    let fresh_tmp = d.join(".x.ftl.1.tmp");
    let other = d.join("notes.txt");
    for p in [&foreign, &fresh_tmp, &other] {
        fs::write(p, b"x").unwrap();
    }
    let done = preconditioned_ftl(1);
    StateCache::new(&d).store(&drive(), RANDOM, 1, &done).unwrap();
    let size = fs::metadata(&entries(&d)[0]).unwrap().len();
    // Room for two entries and a half: the third store evicts the least recently used.
    let cache = StateCache::with_limit(&d, size * 5 / 2);
    std::thread::sleep(Duration::from_millis(20));
    cache.store(&drive(), RANDOM, 2, &done).unwrap();
    std::thread::sleep(Duration::from_millis(20));
    assert!(!foreign.exists(), "another build's entry is removed");
    assert!(fresh_tmp.exists() && other.exists(), "a recent temporary file and other files stay");
    // Seed 1's entry is used, so seed 2's is the least recently used when seed 3's comes.
    assert_eq!(cache.restore(&drive(), RANDOM, 1, &mut Ftl::new(&drive())), Lookup::Restored);
    std::thread::sleep(Duration::from_millis(20));
    cache.store(&drive(), RANDOM, 3, &done).unwrap();
    let mut ftl = Ftl::new(&drive());
    assert_eq!(entries(&d).len(), 2);
    assert_eq!(cache.restore(&drive(), RANDOM, 1, &mut ftl), Lookup::Restored);
    assert_eq!(cache.restore(&drive(), RANDOM, 3, &mut ftl), Lookup::Restored);
    assert_eq!(cache.restore(&drive(), RANDOM, 2, &mut ftl), Lookup::Missing);
    fs::remove_dir_all(&d).unwrap();
}
