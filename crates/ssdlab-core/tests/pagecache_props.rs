//! Properties of the page cache over random sequences of reads, writes, fsyncs, flusher
//! passes, completions, evictions, truncates and deletes, checked against a shadow that
//! tracks every dirty or under-writeback page from what the API returned.
//!
//! Each test checks one law, so a bug shows in the test of the law it breaks.

use std::collections::{BTreeMap, HashMap};

use proptest::prelude::*;
use ssdlab_core::pagecache::{
    DirtyLimit, Era, PageCache, PageCacheConfig, PageKey, PageState, RaState, ReadPlan, Run, WbWork,
};

const FILES: u32 = 4;
const EOF: u64 = 256;
const S: u64 = 1_000_000_000;

#[derive(Clone, Debug)]
enum Op {
    Read { file: u32, start: u64, len: u64 },
    Write { file: u32, start: u64, len: u64 },
    Fsync { file: u32 },
    Writeback { work: WbWork, max: u64 },
    Complete { pick: usize },
    Shrink { pages: u64 },
    Truncate { file: u32, from: u64 },
    Delete { file: u32 },
    Sleep { ns: u64 },
}

fn arb_op() -> impl Strategy<Value = Op> {
    let file = 0..FILES;
    prop_oneof![
        6 => (file.clone(), 0..EOF, 1..48u64).prop_map(|(file, start, len)| Op::Read { file, start, len }),
        6 => (file.clone(), 0..EOF, 1..24u64).prop_map(|(file, start, len)| Op::Write { file, start, len }),
        1 => file.clone().prop_map(|file| Op::Fsync { file }),
        3 => (prop_oneof![Just(WbWork::Periodic), Just(WbWork::Background), Just(WbWork::All)],
              prop_oneof![Just(1u64), Just(7), Just(64), Just(1024), Just(u64::MAX)])
            .prop_map(|(work, max)| Op::Writeback { work, max }),
        4 => any::<usize>().prop_map(|pick| Op::Complete { pick }),
        1 => (1..64u64).prop_map(|pages| Op::Shrink { pages }),
        1 => (file.clone(), 0..EOF).prop_map(|(file, from)| Op::Truncate { file, from }),
        1 => file.prop_map(|file| Op::Delete { file }),
        3 => prop_oneof![Just(0u64), Just(S / 10), Just(S), Just(5 * S), Just(12 * S)].prop_map(|ns| Op::Sleep { ns }),
    ]
}

fn arb_config() -> impl Strategy<Value = PageCacheConfig> {
    (24..400u64, any::<bool>(), 1..60u32, prop_oneof![Just(4u32), Just(16), Just(1024)], prop_oneof![Just(0u32), Just(16), Just(128)])
        .prop_map(|(budget, today, ratio, chunk, ra_kb)| {
            let mut c = PageCacheConfig::for_era(if today { Era::Today } else { Era::Linux2008 }, budget);
            c.dirty = DirtyLimit::Ratio(ratio);
            c.dirty_background = DirtyLimit::Ratio(ratio / 2);
            c.writeback_chunk_pages = chunk;
            c.read_ahead_kb = ra_kb;
            c
        })
}

/// Which law a test checks.
#[derive(Clone, Copy, PartialEq)]
enum Law {
    Lookups,
    Conservation,
    NoDirtyEvicted,
    Budget,
    RunOrder,
    Expiry,
    Shadow,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Sh {
    Dirty,
    Writeback,
    WbDirty,
}

/// What the test knows from the API alone: every page that is dirty or under writeback, and
/// when each dirty page and each dirty file became dirty.
#[derive(Default)]
struct Shadow {
    pages: BTreeMap<(u32, u64), (Sh, u64)>,
    file_dirtied: HashMap<u32, u64>,
}

impl Shadow {
    fn file_dirty(&self, file: u32) -> usize {
        self.pages.range((file, 0)..(file + 1, 0)).filter(|(_, (s, _))| *s != Sh::Writeback).count()
    }
    fn set(&mut self, file: u32, index: u64, st: Option<(Sh, u64)>, now: u64) {
        let was = self.file_dirty(file);
        match st {
            Some(v) => {
                self.pages.insert((file, index), v);
            }
            None => {
                self.pages.remove(&(file, index));
            }
        }
        let is = self.file_dirty(file);
        if was == 0 && is > 0 {
            self.file_dirtied.insert(file, now);
        }
        if is == 0 {
            self.file_dirtied.remove(&file);
        }
    }
}

fn run(cfg: PageCacheConfig, ops: Vec<Op>, law: Law) -> Result<(), TestCaseError> {
    let mut pc = PageCache::new(cfg.clone()).unwrap();
    let mut ras: Vec<RaState> = (0..FILES).map(|_| pc.new_ra_state()).collect();
    let mut sh = Shadow::default();
    let mut in_flight: Vec<Run> = Vec::new();
    let mut plan = ReadPlan::default();
    let mut evicted: Vec<PageKey> = Vec::new();
    let mut runs: Vec<Run> = Vec::new();
    let mut now = 0u64;
    let mut lookups = 0u64;
    let expire = cfg.dirty_expire_centisecs as u64 * 10_000_000;
    for op in ops {
        evicted.clear();
        runs.clear();
        // What was dirty or under writeback before the op, and what the op added again.
        let before: std::collections::BTreeSet<(u32, u64)> =
            if law == Law::NoDirtyEvicted { sh.pages.keys().copied().collect() } else { Default::default() };
        let mut readded: std::collections::BTreeSet<(u32, u64)> = Default::default();
        let mut handed_out = false;
        let mut work_done = None;
        match op {
            Op::Read { file, start, len } => {
                let sum = pc.read(now, file, &mut ras[file as usize], start..start + len, EOF, &mut plan);
                let end = sum.blocked_at.unwrap_or((start + len).min(EOF));
                lookups += end.saturating_sub(start);
                let mut fetched = std::collections::BTreeSet::new();
                for r in &plan.runs {
                    prop_assert_eq!(r.run.file, file);
                    for i in r.run.start..r.run.end() {
                        prop_assert!(fetched.insert(i), "page {} read twice in one plan", i);
                        readded.insert((file, i));
                        prop_assert!(!sh.pages.contains_key(&(file, i)), "a read fetches dirty page {}", i);
                    }
                }
                if law == Law::Lookups {
                    let missed = (start..end).filter(|i| fetched.contains(i)).count() as u64;
                    prop_assert_eq!(sum.misses, missed, "misses are the requested pages read");
                    prop_assert_eq!(sum.hits + sum.misses, end.saturating_sub(start));
                }
                evicted.extend_from_slice(&plan.evicted);
            }
            Op::Write { file, start, len } => {
                let sum = pc.write(now, file, start..start + len, &mut evicted);
                readded.extend((start..start + sum.pages).map(|i| (file, i)));
                for i in start..start + sum.pages {
                    let next = match sh.pages.get(&(file, i)) {
                        None => Some((Sh::Dirty, now)),
                        Some((Sh::Writeback, _)) => Some((Sh::WbDirty, now)),
                        Some(&v) => Some(v),
                    };
                    sh.set(file, i, next, now);
                }
            }
            Op::Fsync { file } => {
                let sum = pc.fsync(file, &mut runs);
                handed_out = true;
                prop_assert_eq!(sum.pages, runs.iter().map(|r| r.len as u64).sum::<u64>());
                prop_assert!(runs.iter().all(|r| r.file == file));
                if law == Law::RunOrder {
                    for w in runs.windows(2) {
                        prop_assert!(w[1].start > w[0].end(), "fsync runs ascend with gaps: {:?}", w);
                    }
                }
            }
            Op::Writeback { work, max } => {
                let sum = pc.writeback(now, work, max, &mut runs);
                handed_out = true;
                prop_assert!(sum.pages <= max);
                prop_assert_eq!(sum.pages, runs.iter().map(|r| r.len as u64).sum::<u64>());
                if law == Law::RunOrder {
                    check_order(&runs, &sh, cfg.writeback_chunk_pages as u64)?;
                }
                work_done = Some((work, max));
            }
            Op::Complete { pick } => {
                if !in_flight.is_empty() {
                    let r = in_flight.swap_remove(pick % in_flight.len());
                    pc.complete_writeback(now, r);
                    for i in r.start..r.end() {
                        match sh.pages.get(&(r.file, i)) {
                            Some((Sh::Writeback, _)) => sh.set(r.file, i, None, now),
                            Some(&(Sh::WbDirty, t)) => sh.set(r.file, i, Some((Sh::Dirty, t)), now),
                            _ => {}
                        }
                    }
                }
            }
            Op::Shrink { pages } => {
                pc.shrink(pages, &mut evicted);
            }
            Op::Truncate { file, from } => {
                let sum = pc.truncate(file, from);
                let dirty = sh.pages.range((file, from)..(file + 1, 0)).filter(|(_, (s, _))| *s != Sh::Writeback).count() as u64;
                prop_assert_eq!(sum.dirty, dirty);
                let keys: Vec<_> = sh.pages.range((file, from)..(file + 1, 0)).map(|(k, _)| *k).collect();
                for k in keys {
                    sh.set(k.0, k.1, None, now);
                }
            }
            Op::Delete { file } => {
                pc.delete(file);
                let keys: Vec<_> = sh.pages.range((file, 0)..(file + 1, 0)).map(|(k, _)| *k).collect();
                for k in keys {
                    sh.set(k.0, k.1, None, now);
                }
            }
            Op::Sleep { ns } => now += ns,
        }
        if handed_out {
            for r in &runs {
                prop_assert!(r.len > 0);
                for i in r.start..r.end() {
                    match sh.pages.get(&(r.file, i)) {
                        Some(&(Sh::Dirty, t)) => sh.set(r.file, i, Some((Sh::Writeback, t)), now),
                        other => prop_assert!(false, "page {}:{} handed out for writeback in state {:?}", r.file, i, other),
                    }
                }
                in_flight.push(*r);
            }
        }
        // The laws.
        let st = pc.stats().clone();
        match law {
            Law::Lookups => {
                prop_assert_eq!(st.lookups, st.hits + st.misses);
                prop_assert_eq!(st.lookups, lookups);
            }
            Law::Conservation => {
                prop_assert_eq!(st.dirtied, st.written_back + st.dropped_dirty + pc.dirty_pages(), "{:?}", st);
                let dirty = sh.pages.values().filter(|(s, _)| *s != Sh::Writeback).count() as u64;
                prop_assert_eq!(pc.dirty_pages(), dirty);
            }
            Law::NoDirtyEvicted => {
                for k in &evicted {
                    prop_assert!(!before.contains(&(k.file, k.index)), "evicted {:?}, which was dirty or under writeback", k);
                    prop_assert!(
                        pc.page_info(k.file, k.index).is_none() || readded.contains(&(k.file, k.index)),
                        "evicted {:?} is still cached", k
                    );
                }
            }
            Law::Budget => {
                prop_assert!(pc.cached_pages() <= cfg.budget_pages, "{} cached, budget {}", pc.cached_pages(), cfg.budget_pages);
            }
            Law::Expiry => {
                if let Some((WbWork::Periodic, u64::MAX)) = work_done {
                    for (&(f, i), &(s, t)) in &sh.pages {
                        if s == Sh::Dirty {
                            prop_assert!(t + expire > now, "page {}:{} dirtied at {} still dirty after the periodic pass at {}", f, i, t, now);
                        }
                    }
                }
            }
            Law::Shadow => {
                pc.audit().map_err(TestCaseError::fail)?;
                for (&(f, i), &(s, t)) in &sh.pages {
                    let info = pc.page_info(f, i).ok_or_else(|| TestCaseError::fail(format!("{f}:{i} lost")))?;
                    let want = match s {
                        Sh::Dirty => PageState::Dirty,
                        Sh::Writeback => PageState::Writeback,
                        Sh::WbDirty => PageState::WritebackDirty,
                    };
                    prop_assert_eq!(info.state, want, "page {}:{}", f, i);
                    if s != Sh::Writeback {
                        let at = info.dirtied_at.unwrap();
                        prop_assert!(at <= t && t - at < 10_000_000, "dirtied at {} recorded {}", t, at);
                    }
                }
                prop_assert_eq!(pc.writeback_pages(), sh.pages.values().filter(|(s, _)| *s != Sh::Dirty).count() as u64);
            }
            Law::RunOrder => {}
        }
    }
    Ok(())
}

/// Runs of one flusher call: contiguous pages (adjacent runs of a file are never mergeable);
/// each file's pages ascend from where it starts, wrapping at most once; a file gives at most
/// a chunk per turn; files are served in the order they became dirty, round-robin (a
/// rotation of that order).
fn check_order(runs: &[Run], sh: &Shadow, chunk: u64) -> Result<(), TestCaseError> {
    let mut per_file: BTreeMap<u32, Vec<u64>> = BTreeMap::new();
    let mut turns: Vec<(u32, u64)> = Vec::new();
    for (k, r) in runs.iter().enumerate() {
        if k > 0 && runs[k - 1].file == r.file {
            prop_assert!(runs[k - 1].end() != r.start, "adjacent runs {:?} {:?} should be one", runs[k - 1], r);
        }
        per_file.entry(r.file).or_default().extend(r.start..r.end());
        match turns.last_mut() {
            Some((f, n)) if *f == r.file && *n + (r.len as u64) <= chunk => *n += r.len as u64,
            _ => turns.push((r.file, r.len as u64)),
        }
    }
    for (f, pages) in &per_file {
        let descents = pages.windows(2).filter(|w| w[1] <= w[0]).count();
        prop_assert!(descents <= 1, "file {} pages not a rotation of ascending: {:?}", f, pages);
        if descents == 1 {
            prop_assert!(pages.last() < pages.first(), "file {} wrapped past its start: {:?}", f, pages);
        }
    }
    // The order the files were first served in, by when they became dirty (the shadow's
    // times, taken before the call handed pages out: files cleaned by the call still count).
    let mut order: Vec<u32> = Vec::new();
    for (f, _) in &turns {
        if !order.contains(f) {
            order.push(*f);
        }
    }
    let keys: Vec<(u64, u32)> = order.iter().map(|f| (sh.file_dirtied.get(f).copied().unwrap_or(u64::MAX), *f)).collect();
    let descents = keys.windows(2).filter(|w| w[1] < w[0]).count();
    prop_assert!(descents <= 1, "files served out of dirtied order: {:?}", keys);
    if descents == 1 {
        prop_assert!(keys.last() < keys.first(), "files served out of round-robin order: {:?}", keys);
    }
    Ok(())
}

fn cases() -> ProptestConfig {
    ProptestConfig { cases: 192, ..ProptestConfig::default() }
}

proptest! {
    #![proptest_config(cases())]

    #[test]
    fn hits_and_misses_make_the_lookups(cfg in arb_config(), ops in prop::collection::vec(arb_op(), 1..120)) {
        run(cfg, ops, Law::Lookups)?;
    }

    #[test]
    fn dirty_pages_are_written_dropped_or_still_dirty(cfg in arb_config(), ops in prop::collection::vec(arb_op(), 1..120)) {
        run(cfg, ops, Law::Conservation)?;
    }

    #[test]
    fn no_page_is_evicted_dirty(cfg in arb_config(), ops in prop::collection::vec(arb_op(), 1..120)) {
        run(cfg, ops, Law::NoDirtyEvicted)?;
    }

    #[test]
    fn the_cache_never_exceeds_its_budget(cfg in arb_config(), ops in prop::collection::vec(arb_op(), 1..120)) {
        run(cfg, ops, Law::Budget)?;
    }

    #[test]
    fn writeback_runs_are_contiguous_and_in_order(cfg in arb_config(), ops in prop::collection::vec(arb_op(), 1..120)) {
        run(cfg, ops, Law::RunOrder)?;
    }

    #[test]
    fn expired_pages_are_in_the_periodic_pass(cfg in arb_config(), ops in prop::collection::vec(arb_op(), 1..120)) {
        run(cfg, ops, Law::Expiry)?;
    }

    #[test]
    fn the_cache_agrees_with_what_it_said(cfg in arb_config(), ops in prop::collection::vec(arb_op(), 1..120)) {
        run(cfg, ops, Law::Shadow)?;
    }
}
