//! Kyber (blk-mq, Linux 4.12 on; as in 6.x): no sorting, no per-process queues. Requests
//! wait in one list per domain (reads, writes, discards, other), and a request may go to the
//! device only with a token of its domain. Each domain's token count (its depth) adapts to
//! latency: every 100 ms Kyber looks at the p90 of each domain's device latency (dispatch to
//! completion) against the domain's target; if any is over ("congestion"), domains whose p99
//! total latency (block-layer entry to completion) is under target are throttled, in
//! proportion to how far under they are, and domains over target are opened up. Dispatch
//! takes batches from one domain at a time (16 reads, 8 writes, 1 discard, 1 other), round
//! robin. Source: block/kyber-iosched.c.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};
use schemars::JsonSchema;

use super::lists::tag_slot;
use super::{IoScheduler, SchedCtx};
use crate::block::request::Request;
use crate::io::{Op, Tag};
use crate::engine::{Time, NS_PER_MS, NS_PER_S};
use crate::error::ConfigError;

/// `/sys/block/*/queue/iosched/` of kyber (ns, as sysfs shows them).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct KyberTunables {
    /// Target latency of reads (`read_lat_nsec`, default 2 ms).
    pub read_lat_nsec: Time,
    /// Target latency of writes (`write_lat_nsec`, default 10 ms).
    pub write_lat_nsec: Time,
}

impl Default for KyberTunables {
    fn default() -> Self {
        KyberTunables { read_lat_nsec: 2 * NS_PER_MS, write_lat_nsec: 10 * NS_PER_MS }
    }
}

impl KyberTunables {
    pub fn validate(&self) -> Result<(), ConfigError> {
        for (key, v) in [("iosched.read_lat_nsec", self.read_lat_nsec), ("iosched.write_lat_nsec", self.write_lat_nsec)] {
            if v == 0 {
                return Err(ConfigError::new(key, "a target latency must be positive".into()));
            }
        }
        Ok(())
    }
}

const DOMAINS: usize = 4;
const OTHER: usize = 3;
/// The most tokens each domain has (kyber_depth[]).
const MAX_DEPTH: [u32; DOMAINS] = [256, 128, 64, 16];
/// Requests one domain sends before the next gets a turn (kyber_batch_size[]).
const BATCH: [u32; DOMAINS] = [16, 8, 1, 1];
/// Target of discards (5 s, not tunable).
const DISCARD_TARGET: Time = 5 * NS_PER_S;
/// Latency histograms: 8 buckets of a quarter of the target each; the first 4 are "good".
const LATENCY_SHIFT: u32 = 2;
const GOOD_BUCKETS: usize = 1 << LATENCY_SHIFT;
const BUCKETS: usize = 2 << LATENCY_SHIFT;
const TOTAL: usize = 0;
const IO: usize = 1;
/// How often depths are reconsidered while requests complete (HZ / 10).
const TIMER_NS: Time = 100 * NS_PER_MS;

fn domain(op: Op) -> usize {
    match op {
        Op::Read => 0,
        Op::Write => 1,
        Op::Trim => 2,
        Op::Flush => OTHER,
    }
}

#[derive(Clone, Copy, Debug, Default)]
struct Entry {
    domain: u8,
    dispatched_at: Time,
}

pub struct Kyber {
    targets: [Time; 3],
    jiffy_ns: Time,
    lists: [VecDeque<Tag>; DOMAINS],
    depth: [u32; DOMAINS],
    in_use: [u32; DOMAINS],
    cur: usize,
    batching: u32,
    entries: Vec<Entry>,
    /// Latency histograms per domain (not `other`) and kind (total, device).
    hist: [[[u32; BUCKETS]; 2]; 3],
    /// When a domain with too few samples is judged anyway (a second after it was first
    /// asked about).
    judge_by: [Option<Time>; 3],
    /// The last p99 of each domain, kept until congestion is seen.
    last_p99: [Option<usize>; 3],
    /// The depth timer is pending.
    timer_armed: bool,
    queued: usize,
}

impl Kyber {
    pub fn new(t: KyberTunables, hz: u32) -> Kyber {
        Kyber {
            targets: [t.read_lat_nsec, t.write_lat_nsec, DISCARD_TARGET],
            jiffy_ns: NS_PER_S / hz.max(1) as u64,
            lists: Default::default(),
            depth: MAX_DEPTH,
            in_use: [0; DOMAINS],
            cur: 0,
            batching: 0,
            entries: Vec::new(),
            hist: [[[0; BUCKETS]; 2]; 3],
            judge_by: [None; 3],
            last_p99: [None; 3],
            timer_armed: false,
            queued: 0,
        }
    }

    /// Each domain's depth now (tokens), for reports and tests.
    pub fn depths(&self) -> [u32; DOMAINS] {
        self.depth
    }

    /// A request of the current domain, if it has one and a token for it.
    fn take_current(&mut self, now: Time) -> Option<Tag> {
        let d = self.cur;
        if self.lists[d].is_empty() || self.in_use[d] >= self.depth[d] {
            return None;
        }
        let tag = self.lists[d].pop_front()?;
        self.in_use[d] += 1;
        self.batching += 1;
        self.queued -= 1;
        self.entries[tag as usize].dispatched_at = now;
        Some(tag)
    }

    fn record(&mut self, d: usize, kind: usize, latency: Time) {
        let divisor = (self.targets[d] >> LATENCY_SHIFT).max(1);
        let bucket = if latency == 0 { 0 } else { (((latency - 1) / divisor) as usize).min(BUCKETS - 1) };
        self.hist[d][kind][bucket] += 1;
    }

    /// calculate_percentile: the bucket holding percentile `p` of domain `d`'s histogram
    /// `kind`, once it has 500 samples or a second has passed since it was first asked;
    /// the histogram starts again then.
    fn percentile(&mut self, d: usize, kind: usize, p: u32, now: Time) -> Option<usize> {
        let samples: u32 = self.hist[d][kind].iter().sum();
        if samples == 0 {
            return None;
        }
        let by = *self.judge_by[d].get_or_insert(now + NS_PER_S);
        if samples < 500 && now < by {
            return None;
        }
        self.judge_by[d] = None;
        let mut wanted = (samples * p).div_ceil(100);
        let mut bucket = 0;
        while bucket < BUCKETS - 1 {
            if self.hist[d][kind][bucket] >= wanted {
                break;
            }
            wanted -= self.hist[d][kind][bucket];
            bucket += 1;
        }
        self.hist[d][kind] = [0; BUCKETS];
        Some(bucket)
    }

    /// kyber_timer_fn: resize the domains' depths from their latencies.
    fn adjust(&mut self, now: Time) {
        let mut bad = false;
        for d in 0..3 {
            if self.percentile(d, IO, 90, now).is_some_and(|b| b >= GOOD_BUCKETS) {
                bad = true;
            }
        }
        for d in 0..3 {
            let mut p99 = self.percentile(d, TOTAL, 99, now);
            if bad {
                p99 = p99.or(self.last_p99[d]);
                self.last_p99[d] = None;
            } else if p99.is_some() {
                self.last_p99[d] = p99;
            }
            let Some(p99) = p99 else { continue };
            // Scaled by p99 against the target: 3/4 of it gives 3/4 of the depth, twice it
            // twice the depth.
            if bad || p99 >= GOOD_BUCKETS {
                let depth = (self.depth[d] * (p99 as u32 + 1)) >> LATENCY_SHIFT;
                self.depth[d] = depth.clamp(1, MAX_DEPTH[d]);
            }
        }
    }
}

impl IoScheduler for Kyber {
    fn name(&self) -> &'static str {
        "kyber"
    }

    fn insert(&mut self, tag: Tag, rq: &Request, _ctx: &mut SchedCtx) {
        let d = domain(rq.op);
        *tag_slot(&mut self.entries, tag) = Entry { domain: d as u8, dispatched_at: 0 };
        self.lists[d].push_back(tag);
        self.queued += 1;
    }

    fn dispatch(&mut self, ctx: &mut SchedCtx) -> Option<Tag> {
        if self.batching < BATCH[self.cur] {
            if let Some(tag) = self.take_current(ctx.now) {
                return Some(tag);
            }
        }
        // A new batch, from the next domain with requests and a token (back round to this
        // one if no other has any).
        self.batching = 0;
        for _ in 0..DOMAINS {
            self.cur = (self.cur + 1) % DOMAINS;
            if let Some(tag) = self.take_current(ctx.now) {
                return Some(tag);
            }
        }
        None
    }

    fn completed(&mut self, tag: Tag, rq: &Request, ctx: &mut SchedCtx) {
        let e = self.entries[tag as usize];
        let d = e.domain as usize;
        self.in_use[d] -= 1;
        if d == OTHER {
            return;
        }
        self.record(d, TOTAL, ctx.now - rq.started_at);
        self.record(d, IO, ctx.now - e.dispatched_at);
        if !self.timer_armed {
            // timer_reduce(jiffies + HZ / 10): on the tick, a tenth of a second on.
            let at = (ctx.now + TIMER_NS).div_ceil(self.jiffy_ns) * self.jiffy_ns;
            self.timer_armed = true;
            ctx.arm(at, 0, 0);
        }
    }

    fn timer(&mut self, _key: u16, _token: u32, ctx: &mut SchedCtx) {
        self.timer_armed = false;
        self.adjust(ctx.now);
    }

    fn queued(&self) -> usize {
        self.queued
    }

    fn merges(&self) -> bool {
        true
    }

    fn requests_merged(&mut self, _kept: Tag, _kept_rq: &Request, gone: Tag) {
        let list = &mut self.lists[self.entries[gone as usize].domain as usize];
        if let Some(i) = list.iter().position(|&t| t == gone) {
            list.remove(i);
            self.queued -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::block::iosched::ArmedTimer;

    fn rq(op: Op, started_at: Time) -> Request {
        Request::new(op, 0, 4096, 0, started_at, 0)
    }

    #[test]
    fn domains_take_turns_in_batches() {
        let mut k = Kyber::new(KyberTunables::default(), 1000);
        let mut armed: Vec<ArmedTimer> = vec![];
        let mut ctx = SchedCtx::new(0, &mut armed);
        for tag in 0..20 {
            k.insert(tag, &rq(Op::Read, 0), &mut ctx);
        }
        for tag in 20..30 {
            k.insert(tag, &rq(Op::Write, 0), &mut ctx);
        }
        let order: Vec<Tag> = std::iter::from_fn(|| k.dispatch(&mut ctx)).collect();
        let expect: Vec<Tag> = (0..16).chain(20..28).chain(16..20).chain(28..30).collect();
        assert_eq!(order, expect, "16 reads, 8 writes, the other reads, the other writes");
    }

    /// Completes `n` requests of `op` with the given latencies (total, in the device).
    fn complete(k: &mut Kyber, op: Op, n: u32, now: Time, total: Time, io: Time, armed: &mut Vec<ArmedTimer>) {
        for _ in 0..n {
            let mut ctx = SchedCtx::new(now, armed);
            k.insert(0, &rq(op, now - total), &mut ctx);
            let mut ctx = SchedCtx::new(now - io, armed);
            k.cur = domain(op);
            k.batching = 0;
            assert_eq!(k.dispatch(&mut ctx), Some(0));
            let mut ctx = SchedCtx::new(now, armed);
            k.completed(0, &rq(op, now - total), &mut ctx);
        }
    }

    fn fire(k: &mut Kyber, armed: &mut Vec<ArmedTimer>) -> Time {
        let t = armed.pop().expect("a timer armed");
        k.timer(t.key, t.token, &mut SchedCtx::new(t.at, armed));
        t.at
    }

    #[test]
    fn reads_over_target_throttle_writes_under_theirs() {
        let mut k = Kyber::new(KyberTunables::default(), 1000);
        let mut armed = vec![];
        // Reads take 4 ms in the device (twice their 2 ms target): congestion. Writes'
        // p99 total latency is 5 ms, half their 10 ms target: bucket 1 (of 4 good ones).
        complete(&mut k, Op::Read, 600, 10 * NS_PER_MS, 4 * NS_PER_MS, 4 * NS_PER_MS, &mut armed);
        complete(&mut k, Op::Write, 600, 10 * NS_PER_MS, 5 * NS_PER_MS, NS_PER_MS, &mut armed);
        assert_eq!(armed.len(), 1, "one timer while it is pending");
        let at = fire(&mut k, &mut armed);
        assert_eq!(at, 110 * NS_PER_MS);
        let d = k.depths();
        // Writes: 5 ms in buckets of 2.5 ms is bucket 1, so 128 × (1 + 1) / 4.
        assert_eq!(d[1], 64, "writes throttled to half: their p99 is half their target");
        // Reads: 4 ms in buckets of 0.5 ms is bucket 7: opened up (256 × 8 / 4, at most 256).
        assert_eq!(d[0], 256);
        // Without congestion, good domains keep their depth; a domain over target opens up.
        let mut k = Kyber::new(KyberTunables::default(), 1000);
        complete(&mut k, Op::Write, 600, 10 * NS_PER_MS, 5 * NS_PER_MS, NS_PER_MS, &mut armed);
        fire(&mut k, &mut armed);
        assert_eq!(k.depths()[1], 128);
    }

    #[test]
    fn a_throttled_domain_waits_for_a_token() {
        let mut k = Kyber::new(KyberTunables::default(), 1000);
        k.depth[1] = 2;
        let mut armed: Vec<ArmedTimer> = vec![];
        let mut ctx = SchedCtx::new(0, &mut armed);
        for tag in 0..3 {
            k.insert(tag, &rq(Op::Write, 0), &mut ctx);
        }
        assert_eq!(k.dispatch(&mut ctx), Some(0));
        assert_eq!(k.dispatch(&mut ctx), Some(1));
        assert_eq!(k.dispatch(&mut ctx), None, "two tokens, both in use");
        k.completed(0, &rq(Op::Write, 0), &mut ctx);
        assert_eq!(k.dispatch(&mut ctx), Some(2));
    }
}
