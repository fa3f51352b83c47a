//! Bring a drive to a used state without simulating time: the same FTL code places data and
//! collects garbage, but no events run. Random overwrites reach the GC steady state that a
//! timed run would reach (checked by tests against a simulated fill). A sequential fill of a
//! fresh drive without an SLC cache is written a block at a time (`Ftl::fill_in_order`, the
//! state unit-by-unit placement leaves): a 61.44 TB drive in a tenth of a second.

use rand::Rng as _;
use serde::{Deserialize, Serialize};
use schemars::JsonSchema;

use super::ftl::Ftl;
use super::state_cache::{Lookup, StateCache};
use super::{Ssd, SsdConfig};
use crate::engine::rng::stream;
use crate::error::SimError;
use crate::progress::{Phase, PreconditionProgress, Progress, Watch, CHECK_WRITES};

#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Default, JsonSchema)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum Precondition {
    /// Fresh drive: nothing mapped.
    #[default]
    None,
    /// Every logical IU written once, in order.
    Sequential,
    /// A sequential fill, then `passes` × capacity of uniformly random IU overwrites.
    Random { passes: f64 },
}

/// Apply `p` to `ssd`. Counters of host and NAND traffic start again from zero afterwards;
/// wear (per-block erase counts) is kept, as on a real used drive.
pub fn precondition(ssd: &mut Ssd, p: Precondition, seed: u64) {
    precondition_watched(ssd, p, seed, &mut Watch::off(), "")
        .expect("no observer, so nothing can stop the preconditioning");
}

/// [`precondition`], telling `watch` how far it is (as drive `device`); its observer may
/// stop it, and the drive is then left half-written.
pub fn precondition_watched(
    ssd: &mut Ssd,
    p: Precondition,
    seed: u64,
    watch: &mut Watch,
    device: &str,
) -> Result<(), SimError> {
    precondition_with(ssd, p, seed, watch, device, Fill::Bulk)
}

/// How the sequential fill is done: a block at a time where the FTL can (the same state),
/// or unit by unit always (what tests hold the bulk fill to).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(not(test), allow(dead_code))]
enum Fill {
    Bulk,
    UnitByUnit,
}

fn precondition_with(
    ssd: &mut Ssd,
    p: Precondition,
    seed: u64,
    watch: &mut Watch,
    device: &str,
    fill: Fill,
) -> Result<(), SimError> {
    if p == Precondition::None {
        return Ok(());
    }
    let passes = match p {
        Precondition::Random { passes } => passes.max(0.0),
        _ => 0.0,
    };
    let ftl = ssd.ftl_mut();
    let logical = ftl.logical_ius() as u32;
    // Written so far: the fill, then the overwrites.
    let progress = |written: u64| {
        let whole = logical.max(1) as f64;
        let fill = (written as f64 / whole).min(1.0);
        let passes_done = ((written as f64 - whole) / whole).clamp(0.0, passes);
        let mut p = Progress::at(Phase::Precondition, 0, 0);
        p.precondition = Some(PreconditionProgress { device: device.to_string(), fill, passes_done, passes, restored: false });
        p.fraction = Some((fill + passes_done) / (1.0 + passes));
        p
    };
    watch.tell(progress(0))?;
    // In runs of CHECK_WRITES writes, the watch checked between them: the writes themselves
    // are the loops they always were.
    let mut writer = Writer { die: 0, pending: Vec::new() };
    let mut done = 0u64;
    if fill == Fill::Bulk {
        if let Some(units) = ftl.fill_in_order() {
            // The writer goes on round-robin from the die after the last unit's.
            writer.die = (units % ftl.dies as u64) as u32;
            done = logical as u64;
            watch.check(|| progress(done))?;
        }
    }
    while done < logical as u64 {
        let end = (done + CHECK_WRITES).min(logical as u64);
        for lpn in done as u32..end as u32 {
            writer.write(ftl, lpn);
        }
        done = end;
        watch.check(|| progress(done))?;
    }
    writer.flush(ftl);
    if let Precondition::Random { .. } = p {
        let mut rng = stream(seed, "precondition", 0);
        let writes = (passes * logical as f64) as u64;
        let mut done = 0u64;
        // The IUs are drawn a run ahead, in the order they are written (so the same ones):
        // each one's map entry is asked for a few units before it is written, which hides
        // the cache miss its lookup otherwise is on a map far larger than the caches.
        let mut lpns = Vec::with_capacity(CHECK_WRITES as usize);
        while done < writes {
            let n = (writes - done).min(CHECK_WRITES);
            lpns.clear();
            lpns.extend((0..n).map(|_| rng.gen_range(0..logical)));
            for &lpn in &lpns[..AHEAD.min(lpns.len())] {
                ftl.prefetch(lpn);
            }
            for (i, &lpn) in lpns.iter().enumerate() {
                if let Some(&next) = lpns.get(i + AHEAD) {
                    ftl.prefetch(next);
                }
                writer.write(ftl, lpn);
            }
            done += n;
            watch.check(|| progress(logical as u64 + done))?;
        }
        writer.flush(ftl);
    }
    ftl.counters = Default::default();
    Ok(())
}

/// Write the IUs holding byte runs `runs` (IUs of `iu_bytes`), in order, as a sequential
/// write of them would place them, without time ([`BlockDevice::lay_out`]); an IU two runs
/// share is written once. Counters start again from zero, as after preconditioning.
///
/// [`BlockDevice::lay_out`]: crate::device::BlockDevice::lay_out
pub fn lay_out(ftl: &mut Ftl, iu_bytes: u64, runs: &[(u64, u64)]) {
    if runs.iter().all(|r| r.1 == 0) {
        return; // nothing laid out: the drive and its counters stay as they are
    }
    let mut writer = Writer { die: 0, pending: Vec::new() };
    let logical = ftl.logical_ius();
    let mut last = None;
    for &(offset, len) in runs.iter().filter(|r| r.1 > 0) {
        let (first, end) = (offset / iu_bytes, (offset + len).div_ceil(iu_bytes).min(logical));
        for lpn in first..end {
            if last != Some(lpn) {
                writer.write(ftl, lpn as u32);
                last = Some(lpn);
            }
        }
    }
    writer.flush(ftl);
    ftl.counters = Default::default();
}

/// Random overwrites whose map entries are asked for ahead of their writes (assumed: a few
/// program units ahead, enough to cover a DRAM miss at a few ns a write, and few enough
/// that the entries are still cached when written; measured: 17.0 s against 18.9 s without,
/// `random:1` on the 970 EVO Plus 1 TB at scale 0.25, and no gain from asking for the old
/// slots' entries too).
const AHEAD: usize = 64;

/// [`precondition_watched`] of a drive described by `cfg`, its state read from `states`
/// where that keeps `p` and holds it, and stored there after preconditioning where it does
/// not yet (see [`StateCache`]). The drive ends in the same state either way.
pub fn precondition_kept(
    ssd: &mut Ssd,
    cfg: &SsdConfig,
    p: Precondition,
    seed: u64,
    watch: &mut Watch,
    device: &str,
    states: Option<&StateCache>,
) -> Result<(), SimError> {
    let Some(cache) = states.filter(|_| StateCache::keeps(p)) else {
        return precondition_watched(ssd, p, seed, watch, device);
    };
    if cache.restore(cfg, p, seed, ssd.ftl_mut()) == Lookup::Restored {
        let passes = if let Precondition::Random { passes } = p { passes } else { 0.0 };
        return tell_done(watch, device, passes, true);
    }
    precondition_watched(ssd, p, seed, watch, device)?;
    // A cache that cannot be written (a full or read-only disk) only costs time next run.
    let _ = cache.store(cfg, p, seed, ssd.ftl());
    Ok(())
}

/// Tell `watch` that drive `device` has been filled in order at once (its fill copied from a
/// drive like it): progress reports name every preconditioned drive.
pub fn tell_filled(watch: &mut Watch, device: &str) -> Result<(), SimError> {
    tell_done(watch, device, 0.0, false)
}

fn tell_done(watch: &mut Watch, device: &str, passes: f64, restored: bool) -> Result<(), SimError> {
    let mut p = Progress::at(Phase::Precondition, 0, 0);
    p.precondition =
        Some(PreconditionProgress { device: device.to_string(), fill: 1.0, passes_done: passes, passes, restored });
    p.fraction = Some(1.0);
    watch.tell(p)
}

/// Places host IUs as the timed write path does, without time: round-robin over the dies
/// that can take data (as striping on an idle drive does), in SLC or native units as the
/// cache state says, so a fast fill leaves the SLC cache as a simulated one would.
struct Writer {
    die: u32,
    pending: Vec<u32>,
}

impl Writer {
    fn write(&mut self, ftl: &mut Ftl, lpn: u32) {
        self.pending.push(lpn);
        let mode = ftl.host_mode(self.die);
        if self.pending.len() >= ftl.unit_ius(mode) as usize {
            self.place(ftl);
        }
    }

    fn flush(&mut self, ftl: &mut Ftl) {
        while !self.pending.is_empty() {
            self.place(ftl);
        }
    }

    fn place(&mut self, ftl: &mut Ftl) {
        // No time passes here, so GC work has no one to charge (as below).
        while ftl.collect_starved().is_some() {}
        let dies = ftl.dies;
        for _ in 0..dies {
            let d = self.die;
            self.die = (self.die + 1) % dies;
            if ftl.accepts_host_data(d) {
                let mode = ftl.host_mode(d);
                let n = self.pending.len().min(ftl.unit_ius(mode) as usize);
                let placed = ftl.place_host_unit_in(d, &self.pending[..n], mode);
                // No time passes here, so GC work (if any) has no one to charge.
                let _ = ftl.mark_programmed(placed.block, ftl.unit_ius(mode));
                self.pending.drain(..n);
                return;
            }
        }
        // A validated drive always has a die with room (its spare exceeds the GC reserve).
        unreachable!("preconditioning found no die that can take data");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::ssd::config::SlcCacheConfig;
    use crate::device::ssd::ftl::FtlCounters;

    /// `cfg` preconditioned with `p` from seed 7, the fill done as `fill` says.
    fn ftl_after(cfg: &SsdConfig, p: Precondition, fill: Fill) -> Ftl {
        let mut ssd = Ssd::new(cfg.clone(), 7).expect("a valid test drive");
        precondition_with(&mut ssd, p, 7, &mut Watch::off(), "", fill).unwrap();
        ssd.ftl().check_invariants().unwrap();
        ssd.ftl().clone()
    }

    /// Small drives of different shapes: 1 GiB generic (8-IU units, 32 dies); one whose last
    /// unit is partial and whose units do not divide among the dies; one of 24-IU units
    /// (three pages a program) with an odd number of dies; and one with an SLC cache.
    fn drives() -> Vec<(&'static str, SsdConfig, bool)> {
        let generic = SsdConfig::generic(1);
        let mut ragged = SsdConfig::generic(1);
        ragged.capacity_bytes -= 5 * 4096 + 3 * 8 * 4096;
        let mut tlc = SsdConfig::generic(1);
        tlc.nand.dies_per_channel = 3;
        tlc.nand.channels = 5;
        tlc.nand.program_pages = 3;
        tlc.nand.pages_per_block = 18;
        tlc.nand.blocks_per_plane = 140;
        tlc.capacity_bytes = (1 << 30) - 7 * 4096;
        let mut slc = SsdConfig::generic(1);
        slc.nand.pages_per_block = 18;
        slc.nand.blocks_per_plane = 90;
        slc.slc_cache = Some(SlcCacheConfig {
            static_bytes: 8 << 20,
            dynamic_max_bytes: 32 << 20,
            read_ns: 30_000,
            program_ns: 200_000,
            erase_ns: 2_000_000,
            fold: Default::default(),
        });
        vec![("generic", generic, true), ("ragged", ragged, true), ("tlc", tlc, true), ("slc", slc, false)]
    }

    /// A layout maps exactly the IUs its runs touch (an IU two runs share, a run's partial
    /// end), keeps what was there, and starts the counters again; a layout of nothing leaves
    /// the drive as it was, counters included.
    #[test]
    fn a_layout_maps_the_ius_of_its_runs_and_nothing_else() {
        let cfg = SsdConfig::generic(1);
        let mut ftl = Ftl::new(&cfg);
        let mut writer = Writer { die: 0, pending: Vec::new() };
        writer.write(&mut ftl, 900);
        writer.flush(&mut ftl);
        let before = ftl.clone();
        assert!(before.counters.host_ius > 0);
        lay_out(&mut ftl, 4096, &[]);
        lay_out(&mut ftl, 4096, &[(4096, 0)]);
        assert!(ftl == before, "an empty layout changed the drive");
        // IUs 2-4 (the last one partly), then 4-5: IU 4 shared; then IU 10.
        lay_out(&mut ftl, 4096, &[(8192, 2 * 4096 + 100), (4 * 4096, 2 * 4096), (10 * 4096, 4096)]);
        ftl.check_invariants().unwrap();
        let mapped: Vec<u32> = (0..16).filter(|&l| ftl.lookup(l).is_some()).collect();
        assert_eq!(mapped, vec![2, 3, 4, 5, 10]);
        assert!(ftl.lookup(900).is_some(), "what was there before stays");
        assert_eq!(ftl.counters, FtlCounters::default());
    }

    /// Filled a block at a time or unit by unit, sequentially or then with random
    /// overwrites, every drive ends in the same FTL state: maps, blocks' valid and erase
    /// counts, free lists, open blocks, trees, clock and counters (`Ftl`'s equality).
    #[test]
    fn a_bulk_fill_leaves_the_state_a_unit_by_unit_fill_does() {
        for (name, cfg, bulk) in drives() {
            let fresh = Ftl::new(&cfg);
            assert_eq!(fresh.clone().fill_in_order().is_some(), bulk, "{name}: bulk fill taken");
            for p in [Precondition::Sequential, Precondition::Random { passes: 0.5 }] {
                let fast = ftl_after(&cfg, p, Fill::Bulk);
                let slow = ftl_after(&cfg, p, Fill::UnitByUnit);
                assert_eq!(fast.first_difference(&slow), None, "{name}, {p:?}: the bulk fill left another state");
                assert!(fast == slow);
            }
        }
    }

    /// Where the fill is not regular the FTL is left as it was: a drive with data, and one
    /// whose dies would run down to their GC reserve.
    #[test]
    fn no_bulk_fill_where_it_would_not_be_regular() {
        let cfg = SsdConfig::generic(1);
        let mut used = Ftl::new(&cfg);
        let lpns: Vec<u32> = (0..used.ius_per_pu).collect();
        used.place_host_unit(0, &lpns);
        let before = used.clone();
        assert_eq!(used.fill_in_order(), None);
        assert!(used == before);
        let mut tight = cfg.clone();
        tight.capacity_bytes = tight.raw_bytes() - 2 * tight.dies() as u64 * 16 * 2 * 16384;
        let mut ftl = Ftl::new(&tight);
        assert_eq!(ftl.fill_in_order(), None);
        assert!(ftl == Ftl::new(&tight));
    }
}
