//! A hardware RAID controller's front: every command costs its processor time, every byte
//! crosses its data path, and writes land in a battery-backed write-back cache that is
//! destaged to the members behind the host's back, a bounded number of stripes at a time.

use std::collections::{BTreeMap, VecDeque};

use serde::{Deserialize, Serialize};
use schemars::JsonSchema;

use super::layout::RaidLevel;
use super::layout::Layout;
use super::plan::MemberIo;
use crate::io::Op;
use crate::engine::{transfer_ns, FifoServer, Time};
use crate::error::ConfigError;

/// The unit in which the controller updates data and parity when it destages.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RmwUnit {
    /// Only the dirty bytes (rounded to 4 KiB pages) and their parity, as md does.
    #[default]
    Sector,
    /// Whole strips (chunks): a cache that keeps strips fills a partly dirty strip by reading
    /// its clean bytes, then writes the whole strip and the parity of the whole strip.
    Strip,
}

/// A hardware RAID controller (e.g. seed 001's Adaptec 6805).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HwRaidConfig {
    /// Write-back cache, bytes.
    pub cache_bytes: u64,
    /// Controller processor time per host command, ns (its command-rate ceiling).
    pub command_ns: Time,
    /// Controller processor time per command it sends a member, ns.
    pub member_command_ns: Time,
    /// The controller's data path, bytes per second (its throughput ceiling).
    pub data_bytes_per_s: u64,
    /// The controller's parity engine, bytes of source data per second.
    pub parity_bytes_per_s: f64,
    /// Stripes destaged at once (1: parity updates one after another).
    pub destage_depth: u32,
    /// Commands the controller keeps outstanding at each member.
    pub member_queue_depth: u32,
    /// Host commands the array (one SCSI disk to the host) takes at once; the host's block
    /// layer holds the rest.
    pub queue_depth: u32,
    /// What a destage reads and rewrites of a partly written strip.
    #[serde(default)]
    pub rmw_unit: RmwUnit,
}

/// A destage of dirty bytes `[offset, offset + len)` in whole strips: the range to write (the
/// strips it touches) and the fill reads of their clean bytes. Only parity levels widen: a
/// strip of RAID 0/1/10 needs no old bytes to be written.
pub fn strip_destage(l: &Layout, offset: u64, len: u64, fills: &mut Vec<MemberIo>) -> (u64, u64) {
    fills.clear();
    if !matches!(l.level, RaidLevel::Raid5 | RaidLevel::Raid6) || len == 0 {
        return (offset, len);
    }
    let c = l.chunk;
    let (a, b) = (offset / c * c, (offset + len).div_ceil(c) * c);
    let d = l.data_per_row() as u64;
    // The clean head lies in the first strip, the clean tail in the last.
    for (s, e) in [(a, offset), (offset + len, b)] {
        if s < e {
            let k = s / c;
            let (row, i) = (k / d, (k % d) as u32);
            let member = l.data_member(row, i) as u16;
            fills.push(MemberIo { member, op: Op::Read, offset: row * c + (s - k * c), len: e - s });
        }
    }
    (a, b - a)
}

impl HwRaidConfig {
    /// Errors name the key under the array's engine (`engine.cache_bytes`, …).
    pub fn validate(&self) -> Result<(), ConfigError> {
        let positive = [
            ("cache_bytes", self.cache_bytes),
            ("data_bytes_per_s", self.data_bytes_per_s),
            ("destage_depth", self.destage_depth as u64),
            ("member_queue_depth", self.member_queue_depth as u64),
            ("queue_depth", self.queue_depth as u64),
        ];
        if let Some((key, _)) = positive.iter().find(|(_, v)| *v == 0) {
            return Err(ConfigError::new(&format!("engine.{key}"), "must be positive".into()));
        }
        if !(self.parity_bytes_per_s > 0.0 && self.parity_bytes_per_s.is_finite()) {
            return Err(ConfigError::new("engine.parity_bytes_per_s", "must be a positive rate".into()));
        }
        Ok(())
    }
}

/// The controller's state: its two servers and the cache's dirty ranges.
pub struct Controller {
    cfg: HwRaidConfig,
    command: FifoServer,
    data: FifoServer,
    /// Dirty logical ranges, start -> end, disjoint and not touching.
    dirty: BTreeMap<u64, u64>,
    /// Range starts in the order they became dirty (stale entries are skipped).
    order: VecDeque<u64>,
    dirty_bytes: u64,
    pub destaging: u32,
    /// Host writes waiting for cache space, in arrival order: (slot, offset, len).
    pub waiting: VecDeque<(u32, u64, u64)>,
    pub read_hits: u64,
    pub write_waits: u64,
    pub destaged_bytes: u64,
}

impl Controller {
    /// Host commands it takes at once.
    pub fn queue_depth(&self) -> u32 {
        self.cfg.queue_depth
    }

    pub fn new(cfg: HwRaidConfig) -> Controller {
        Controller {
            cfg,
            command: FifoServer::default(),
            data: FifoServer::default(),
            dirty: BTreeMap::new(),
            order: VecDeque::new(),
            dirty_bytes: 0,
            destaging: 0,
            waiting: VecDeque::new(),
            read_hits: 0,
            write_waits: 0,
            destaged_bytes: 0,
        }
    }

    pub fn config(&self) -> &HwRaidConfig {
        &self.cfg
    }

    /// When a command of `len` bytes arriving at `now` has passed the processor and the
    /// data path.
    pub fn accept(&mut self, now: Time, len: u64) -> Time {
        let t = self.command(now);
        self.transfer(t, len)
    }

    /// When a command arriving at `now` has had its processor time.
    pub fn command(&mut self, now: Time) -> Time {
        self.command.reserve(now, self.cfg.command_ns)
    }

    /// When the processor, from `now`, has handled `members` member commands (and the
    /// host's command, if `host`).
    pub fn commands(&mut self, now: Time, host: bool, members: u64) -> Time {
        let ns = if host { self.cfg.command_ns } else { 0 } + members * self.cfg.member_command_ns;
        self.command.reserve(now, ns)
    }

    /// When `len` bytes ready at `now` have crossed the data path.
    pub fn transfer(&mut self, now: Time, len: u64) -> Time {
        self.data.reserve(now, transfer_ns(len, self.cfg.data_bytes_per_s))
    }

    pub fn busy_ns(&self, at: Time) -> Time {
        self.command.busy_by(at)
    }

    /// Whether `len` more bytes fit in the cache.
    pub fn has_room(&self, len: u64) -> bool {
        self.dirty_bytes + len <= self.cfg.cache_bytes || self.dirty_bytes == 0
    }

    pub fn dirty_bytes(&self) -> u64 {
        self.dirty_bytes
    }

    /// Whether all of `[offset, offset + len)` is dirty in the cache (a read it can serve).
    pub fn holds(&self, offset: u64, len: u64) -> bool {
        self.dirty.range(..=offset).next_back().is_some_and(|(_, &end)| end >= offset + len)
    }

    /// Make `[offset, offset + len)` dirty, joining ranges it overlaps or touches.
    pub fn add(&mut self, offset: u64, len: u64) {
        let (mut start, mut end) = (offset, offset + len);
        let mut removed = 0;
        while let Some((&s, &e)) = self.dirty.range(..=end).next_back() {
            if e < start {
                break;
            }
            start = start.min(s);
            end = end.max(e);
            removed += e - s;
            self.dirty.remove(&s);
        }
        self.dirty_bytes = self.dirty_bytes - removed + (end - start);
        // A range that keeps the start of one already queued keeps its place in the queue.
        if removed == 0 || !self.order.contains(&start) {
            self.order.push_back(start);
        }
        self.dirty.insert(start, end);
    }

    /// The oldest dirty range, taken out of the cache's dirty set (its bytes stay counted
    /// until [`Controller::destaged`]).
    pub fn next_destage(&mut self) -> Option<(u64, u64)> {
        while let Some(s) = self.order.pop_front() {
            if let Some(e) = self.dirty.remove(&s) {
                return Some((s, e - s));
            }
        }
        None
    }

    /// A destage of `len` bytes finished: their cache space is free.
    pub fn destaged(&mut self, len: u64) {
        self.dirty_bytes -= len;
        self.destaged_bytes += len;
        self.destaging -= 1;
    }

    /// Bytes dirty and not yet being destaged.
    pub fn pending(&self) -> bool {
        !self.dirty.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctl() -> Controller {
        Controller::new(HwRaidConfig {
            cache_bytes: 1 << 20,
            command_ns: 1_000,
            member_command_ns: 500,
            data_bytes_per_s: 1_000_000_000,
            parity_bytes_per_s: 1e9,
            destage_depth: 1,
            member_queue_depth: 32,
            queue_depth: 256,
            rmw_unit: RmwUnit::Sector,
        })
    }

    #[test]
    fn dirty_ranges_join_and_are_destaged_oldest_first() {
        let mut c = ctl();
        c.add(8192, 4096);
        c.add(0, 4096);
        c.add(4096, 4096); // joins both neighbours
        c.add(65536, 4096);
        assert_eq!(c.dirty_bytes(), 16384);
        assert!(c.holds(10_000, 10) && !c.holds(12288, 4096) && !c.holds(8000, 8192), "partly cached is a miss");
        c.add(0, 4096); // an overwrite of cached data takes no new space
        assert_eq!(c.dirty_bytes(), 16384);
        c.destaging += 1;
        assert_eq!(c.next_destage(), Some((0, 12288)));
        assert_eq!(c.next_destage(), Some((65536, 4096)));
        assert_eq!(c.next_destage(), None);
        c.destaged(12288);
        assert_eq!(c.dirty_bytes(), 4096);
    }

    #[test]
    fn commands_queue_on_the_processor_then_the_data_path() {
        let mut c = ctl();
        assert_eq!(c.accept(0, 1_000_000), 1_000 + 1_000_000);
        assert_eq!(c.command(0), 2_000, "the processor is free after 1 µs");
        assert_eq!(c.accept(0, 1000), 1_001_000 + 1_000, "the data path is busy until 1.001 ms");
    }
}
