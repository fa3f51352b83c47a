//! Preconditioning cost of one drive, one JSON line:
//!
//!     cargo run --release -p ssdlab-core --example precondition -- DRIVE.json PRECONDITION [SEED]
//!
//! DRIVE.json is a drive description as the core takes it (`{"kind": "nand-ssd", ...}`, what
//! `ssdlab.system.single(profile).drives[0].core` gives); PRECONDITION is `sequential` or
//! `random:PASSES`. The drive is built, then preconditioned once; the line gives the CPU
//! seconds of the preconditioning alone (this thread), of building the drive, and the
//! process's peak resident set. One run per process, so that the peak is this drive's:
//! `benches/precondition.py` runs it several times and prints medians.

use std::time::Duration;

use ssdlab_core::device::drive::DriveConfig;
use ssdlab_core::device::ssd::{precondition, Precondition, Ssd};
use serde_json::json;

/// CPU time this thread has used.
fn thread_cpu() -> Duration {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes the timespec it is given.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID)");
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// The process's peak resident set, in bytes.
fn peak_rss() -> u64 {
    // SAFETY: getrusage writes the struct it is given.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    assert_eq!(rc, 0, "getrusage");
    ru.ru_maxrss as u64 * 1024
}

fn parse_precondition(s: &str) -> Result<Precondition, String> {
    match s.split_once(':') {
        None if s == "sequential" => Ok(Precondition::Sequential),
        None if s == "random" => Ok(Precondition::Random { passes: 2.0 }),
        Some(("random", p)) => p
            .parse::<f64>()
            .ok()
            .filter(|p| p.is_finite() && *p >= 0.0)
            .map(|passes| Precondition::Random { passes })
            .ok_or_else(|| format!("precondition {s:?}: expected random:PASSES with PASSES >= 0")),
        _ => Err(format!("precondition {s:?}: expected sequential or random[:PASSES]")),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 2 || args.len() > 3 {
        eprintln!("usage: precondition DRIVE.json sequential|random[:PASSES] [SEED]");
        std::process::exit(2);
    }
    let fail = |e: String| -> ! {
        eprintln!("{e}");
        std::process::exit(2)
    };
    let text = std::fs::read_to_string(&args[0]).unwrap_or_else(|e| fail(format!("{}: {e}", args[0])));
    let cfg: DriveConfig =
        serde_json::from_str(&text).unwrap_or_else(|e| fail(format!("{}: expected a drive description: {e}", args[0])));
    let DriveConfig::NandSsd(cfg) = cfg else { fail(format!("{}: expected a nand-ssd drive", args[0])) };
    let pre = parse_precondition(&args[1]).unwrap_or_else(|e| fail(e));
    let seed = match args.get(2) {
        Some(s) => s.parse::<u64>().unwrap_or_else(|_| fail(format!("seed {s:?}: expected a whole number"))),
        None => 1,
    };
    let t0 = thread_cpu();
    let mut ssd = Ssd::new(cfg.clone(), seed).unwrap_or_else(|e| fail(format!("{}: {e}", args[0])));
    let t1 = thread_cpu();
    precondition(&mut ssd, pre, seed);
    let t2 = thread_cpu();
    let ftl = ssd.ftl();
    println!(
        "{}",
        json!({
            "drive": cfg.name,
            "capacity_bytes": cfg.capacity_bytes,
            "precondition": args[1],
            "seed": seed,
            "build_cpu_s": (t1 - t0).as_secs_f64(),
            "precondition_cpu_s": (t2 - t1).as_secs_f64(),
            "peak_rss_bytes": peak_rss(),
            "logical_ius": ftl.logical_ius(),
            "valid_ius": ftl.valid_ius(),
            "free_blocks": ftl.free_blocks(),
            "mean_block_erases": ftl.mean_block_erases(),
        })
    );
}
