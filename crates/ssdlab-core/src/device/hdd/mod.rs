//! A hard disk with physical state: the arm's cylinder, the platter's angle, zoned tracks,
//! an on-board cache, and NCQ reordering by shortest positioning time.
//!
//! A command passes the controller (command overhead), then either the cache serves it
//! (a read hit, a write taken into the write-back cache) or it waits for the head. The head
//! serves one media access at a time: seek (plus head settle for a write), wait for the first
//! sector to come round, transfer. With NCQ the drive picks, among the commands it holds,
//! the one it can reach soonest (seek + rotation), unless one has waited past the starvation
//! bound; without NCQ it takes them in order. Dirty cache data is written out (destaged) when
//! no host command waits for the head, or when a write or a flush is waiting for it.

pub mod cache;
pub mod geometry;

use serde::{Deserialize, Serialize};
use schemars::JsonSchema;

use self::cache::{DiskCache, Extent, ReadHit};
use self::geometry::{Geometry, Place};
use crate::device::frontend::{validate_front, ControllerConfig, FrontEnd, HostInterface};
use crate::device::{BlockDevice, DeviceCtx, RequestTable, Drive};
use crate::report::{DeviceKind, DeviceReport, HddReport};
use crate::io::{DeviceRequest, Op, Tag};
use crate::engine::{FifoServer, Time};
use crate::error::ConfigError;

/// The disk's mechanics and layout (ns, sectors).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HddMechanics {
    pub rpm: u32,
    /// Recording surfaces (heads).
    pub surfaces: u32,
    /// Recording zones, outer to inner, of equal cylinder counts.
    pub zones: u32,
    pub sector_bytes: u64,
    pub outer_sectors_per_track: u32,
    pub inner_sectors_per_track: u32,
    pub track_to_track_ns: Time,
    pub average_seek_ns: Time,
    pub full_stroke_ns: Time,
    pub head_switch_ns: Time,
    /// Extra settling before a write after a seek (writes need the head closer on track).
    pub write_settle_ns: Time,
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HddCacheConfig {
    pub bytes: u64,
    /// Read segments the cache is cut into.
    pub segments: u32,
    /// How far past a media read the head goes on reading while idle.
    pub read_ahead_bytes: u64,
    /// Write-back cache on (a write is done once in the cache) or off (once on the media).
    pub write_back: bool,
    /// Dirty extents, oldest first, the drive considers when it picks the next to destage.
    pub destage_window: u32,
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NcqConfig {
    /// Reorder queued commands by shortest positioning time; false: first come, first served.
    pub reorder: bool,
    /// A command waiting longer than this is served next whatever its position (starvation
    /// bound).
    pub max_wait_ns: Time,
}

/// Resolved parameters of a hard disk.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HddConfig {
    pub name: String,
    pub capacity_bytes: u64,
    pub interface: HostInterface,
    /// Commands the drive holds at once (NCQ tags; 1 without NCQ).
    pub queue_depth: u32,
    pub controller: ControllerConfig,
    pub mechanics: HddMechanics,
    pub cache: HddCacheConfig,
    pub ncq: NcqConfig,
}

impl HddConfig {
    fn capacity_sectors(&self) -> u64 {
        self.capacity_bytes.div_ceil(self.mechanics.sector_bytes.max(1))
    }

    /// A 1 TB 7200 rpm SATA disk of 2008, shaped after the Barracuda 7200.11 profile
    /// (which has the sources), for tests and benchmarks.
    pub fn generic() -> HddConfig {
        HddConfig {
            name: "generic-7200rpm-1tb".into(),
            capacity_bytes: 1_000_204_886_016,
            interface: HostInterface::Sata { gbit_per_s: 3.0, efficiency: 0.9 },
            queue_depth: 32,
            controller: ControllerConfig {
                cores: 1,
                read_busy_ns: 60_000,
                write_busy_ns: 60_000,
                trim_busy_ns: 10_000,
                flush_busy_ns: 20_000,
                busy_cv: 0.0,
                latency_ns: 20_000,
            },
            mechanics: HddMechanics {
                rpm: 7200,
                surfaces: 8,
                zones: 16,
                sector_bytes: 512,
                outer_sectors_per_track: 2_100,
                inner_sectors_per_track: 1_050,
                track_to_track_ns: 800_000,
                average_seek_ns: 8_500_000,
                full_stroke_ns: 17_000_000,
                head_switch_ns: 800_000,
                write_settle_ns: 1_000_000,
            },
            cache: HddCacheConfig {
                bytes: 32 << 20,
                segments: 16,
                read_ahead_bytes: 1 << 20,
                write_back: true,
                destage_window: 64,
            },
            ncq: NcqConfig { reorder: true, max_wait_ns: 500_000_000 },
        }
    }

    /// Errors name the offending key.
    pub fn validate(&self) -> Result<(), ConfigError> {
        validate_front(self.capacity_bytes, self.queue_depth, &self.interface, &self.controller)?;
        let m = &self.mechanics;
        for (key, v) in [
            ("mechanics.rpm", m.rpm as u64),
            ("mechanics.surfaces", m.surfaces as u64),
            ("mechanics.zones", m.zones as u64),
            ("mechanics.outer_sectors_per_track", m.outer_sectors_per_track as u64),
            ("mechanics.inner_sectors_per_track", m.inner_sectors_per_track as u64),
            ("mechanics.track_to_track_ns", m.track_to_track_ns),
            ("cache.segments", self.cache.segments as u64),
            ("cache.destage_window", self.cache.destage_window as u64),
        ] {
            if v == 0 {
                return Err(ConfigError::new(key, "must be greater than zero".into()));
            }
        }
        if !matches!(m.sector_bytes, 512 | 4096) {
            return Err(ConfigError::new("mechanics.sector_bytes", format!("512 or 4096 expected, got {}", m.sector_bytes)));
        }
        if !self.capacity_bytes.is_multiple_of(m.sector_bytes) {
            return Err(ConfigError::new("capacity_bytes", format!("not a whole number of {} B sectors", m.sector_bytes)));
        }
        Geometry::new(&self.mechanics, self.capacity_sectors()).map(|_| ())
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HddEvent {
    /// The controller is done with a command.
    Command { tag: Tag },
    /// A write's data arrived from the host.
    DataIn { tag: Tag },
    /// The head finished its media access.
    HeadDone,
    /// Read-ahead has read all of a waiting read.
    Ready { tag: Tag },
    /// A read's data reached the host.
    LinkDone { tag: Tag },
}

/// A host command waiting for the head.
#[derive(Clone, Copy, Debug)]
struct Waiting {
    tag: Tag,
    write: bool,
    lba: u64,
    sectors: u64,
    place: Place,
    angle: Time,
    arrived: Time,
}

/// What the head is doing.
#[derive(Clone, Copy, Debug)]
enum Access {
    Host { tag: Tag, write: bool, lba: u64, sectors: u64 },
    Destage(Extent),
}

pub struct Hdd {
    cfg: HddConfig,
    geo: Geometry,
    front: FrontEnd,
    cache: DiskCache,
    reqs: RequestTable,
    waiting: Vec<Waiting>,
    /// Writes waiting for room in the write-back cache, in arrival order.
    blocked_writes: std::collections::VecDeque<Tag>,
    /// Flushes waiting for the writes cached before them (up to that admission number).
    flushes: Vec<(Tag, u64)>,
    access: Option<Access>,
    /// Where the head is (cylinder, surface) when idle or after the current access.
    head: Place,
    head_busy: FifoServer,
    report: HddReport,
    host_bytes_written: u64,
    host_bytes_read: u64,
    media_bytes_written: u64,
    media_bytes_read: u64,
    run_ended_at: Time,
}

impl Hdd {
    pub fn new(cfg: HddConfig, seed: u64) -> Result<Hdd, ConfigError> {
        cfg.validate()?;
        let geo = Geometry::new(&cfg.mechanics, cfg.capacity_sectors())?;
        let sb = cfg.mechanics.sector_bytes;
        let capacity_sectors = cfg.capacity_bytes / sb;
        let report = HddReport {
            cylinders: geo.cylinders,
            outer_zone_bytes_per_s: geo.zone_rate(0),
            inner_zone_bytes_per_s: geo.zone_rate(geo.zones.len() - 1),
            ..HddReport::default()
        };
        Ok(Hdd {
            front: FrontEnd::new(&cfg.interface, &cfg.controller, seed),
            cache: DiskCache::new(
                cfg.cache.bytes / sb,
                cfg.cache.segments,
                cfg.cache.read_ahead_bytes / sb,
                cfg.cache.write_back,
                capacity_sectors,
            ),
            head: geo.place(0),
            geo,
            reqs: RequestTable::default(),
            waiting: Vec::new(),
            blocked_writes: Default::default(),
            flushes: Vec::new(),
            access: None,
            head_busy: FifoServer::default(),
            report,
            host_bytes_written: 0,
            host_bytes_read: 0,
            media_bytes_written: 0,
            media_bytes_read: 0,
            run_ended_at: 0,
            cfg,
        })
    }

    pub fn geometry(&self) -> &Geometry {
        &self.geo
    }

    /// A request's first sector and sector count.
    fn sectors(&self, offset: u64, len: u64) -> (u64, u64) {
        let sb = self.geo.sector_bytes;
        let first = offset / sb;
        (first, (offset + len).div_ceil(sb) - first)
    }

    /// Seek (or head switch) time from where the head is to `p`; writes settle longer.
    #[inline]
    fn seek_to(&self, p: &Place, write: bool) -> Time {
        let d = self.head.cylinder.abs_diff(p.cylinder);
        if d == 0 {
            return if p.surface == self.head.surface { 0 } else { self.geo.head_switch_ns };
        }
        self.geo.seek_ns(d) + if write { self.cfg.mechanics.write_settle_ns } else { 0 }
    }

    /// Seek plus rotational wait to start an access at `p` (first sector at `angle`) from now.
    #[inline]
    fn positioning(&self, now: Time, p: &Place, angle: Time, write: bool) -> (Time, Time) {
        let seek = self.seek_to(p, write);
        let rev = self.geo.revolution_ns;
        let at = (now + seek) % rev;
        let rotation = if angle >= at { angle - at } else { angle + rev - at };
        (seek, rotation)
    }

    /// The next access for the idle head, if any work waits for it, and when the head can
    /// start it (read-ahead first reads what waiting reads were promised).
    fn pick(&mut self, now: Time) -> Option<(Access, Time)> {
        let must_destage = !self.blocked_writes.is_empty() || !self.flushes.is_empty();
        let destage_ok = self.waiting.is_empty() || must_destage;
        if self.waiting.is_empty() && (self.cache.dirty().is_empty() || !destage_ok) {
            return None;
        }
        let (last, free) = self.cache.stop_read_ahead(now);
        if let Some(lba) = last {
            self.head = self.geo.place(lba);
        }
        self.pick_at(free, must_destage, destage_ok).map(|a| (a, free))
    }

    fn pick_at(&mut self, now: Time, must_destage: bool, destage_ok: bool) -> Option<Access> {
        let fifo = !self.cfg.ncq.reorder || self.cfg.queue_depth == 1;
        // Without reordering, a write or flush waiting for cache room gets the oldest dirty
        // extent destaged before the next host command.
        if fifo && must_destage && !self.cache.dirty().is_empty() {
            return Some(Access::Destage(self.cache.take_dirty(0)));
        }
        // The oldest host command goes first when it has waited too long, or without NCQ.
        if let Some(first) = self.waiting.first() {
            let starved = now.saturating_sub(first.arrived) > self.cfg.ncq.max_wait_ns;
            if fifo || starved {
                if starved && !fifo {
                    self.report.starved += 1;
                }
                let w = self.waiting.remove(0);
                return Some(Access::Host { tag: w.tag, write: w.write, lba: w.lba, sectors: w.sectors });
            }
        }
        // Shortest positioning time first among the commands held (and dirty extents when
        // they may go). The platter's angle now is taken once; a candidate whose seek alone
        // is longer than the best total so far needs no rotation worked out.
        let rev = self.geo.revolution_ns;
        let now_angle = now % rev;
        let cost = |seek: Time, angle: Time| {
            let mut at = now_angle + seek;
            while at >= rev {
                at -= rev;
            }
            seek + if angle >= at { angle - at } else { angle + rev - at }
        };
        let mut best: Option<(Time, bool, usize)> = None;
        for (i, w) in self.waiting.iter().enumerate() {
            let seek = self.seek_to(&w.place, w.write);
            if best.is_some_and(|b| seek >= b.0) {
                continue;
            }
            let total = cost(seek, w.angle);
            if best.is_none_or(|b| total < b.0) {
                best = Some((total, false, i));
            }
        }
        if destage_ok {
            let window = self.cfg.cache.destage_window as usize;
            for (i, x) in self.cache.dirty().iter().take(window).enumerate() {
                let p = self.geo.place(x.lba);
                let seek = self.seek_to(&p, true);
                if best.is_some_and(|b| seek >= b.0) {
                    continue;
                }
                let total = cost(seek, self.geo.angle_ns(&p));
                if best.is_none_or(|b| total < b.0) {
                    best = Some((total, true, i));
                }
            }
        }
        let (_, destage, i) = best?;
        if destage {
            return Some(Access::Destage(self.cache.take_dirty(i)));
        }
        // Order among the rest is arrival order (kept for the starvation check).
        let w = self.waiting.remove(i);
        Some(Access::Host { tag: w.tag, write: w.write, lba: w.lba, sectors: w.sectors })
    }

    /// Give the idle head its next access.
    fn kick(&mut self, ctx: &mut impl DeviceCtx<HddEvent>) {
        if self.access.is_some() {
            return;
        }
        let now = ctx.now();
        let Some((access, start)) = self.pick(now) else { return };
        let (lba, sectors, write) = match access {
            Access::Host { lba, sectors, write, .. } => (lba, sectors, write),
            Access::Destage(x) => (x.lba, x.sectors, true),
        };
        let place = self.geo.place(lba);
        let (seek, rotation) = self.positioning(start, &place, self.geo.angle_ns(&place), write);
        let (transfer, last) = self.geo.transfer_ns(lba, sectors);
        let r = &mut self.report;
        r.media_accesses += 1;
        let d = self.head.cylinder.abs_diff(place.cylinder);
        if d > 0 {
            r.seeks += 1;
            r.seek_cylinders += d as u64;
        }
        r.seek_ns += seek;
        r.rotation_ns += rotation;
        r.transfer_ns += transfer;
        let bytes = sectors * self.geo.sector_bytes;
        if write {
            self.media_bytes_written += bytes;
        } else {
            self.media_bytes_read += bytes;
        }
        let done = self.head_busy.reserve(now, (start - now) + seek + rotation + transfer);
        self.head = last;
        self.access = Some(access);
        ctx.schedule(done, HddEvent::HeadDone);
    }

    /// Room was made in the write cache: take waiting writes, and finish flushes once clean.
    fn cache_room(&mut self, ctx: &mut impl DeviceCtx<HddEvent>) {
        while let Some(&tag) = self.blocked_writes.front() {
            let r = self.reqs[tag as usize];
            let (lba, n) = self.sectors(r.offset, r.len);
            if !self.cache.admit_write(lba, n) {
                break;
            }
            self.blocked_writes.pop_front();
            self.report.cached_writes += 1;
            ctx.complete(tag);
        }
        let cache = &self.cache;
        self.flushes.retain(|&(tag, upto)| {
            let done = cache.clean_up_to(upto);
            if done {
                ctx.complete(tag);
            }
            !done
        });
    }

    fn wait_for_head(&mut self, tag: Tag, write: bool, now: Time) {
        let r = self.reqs[tag as usize];
        let (lba, sectors) = self.sectors(r.offset, r.len);
        let place = self.geo.place(lba);
        let angle = self.geo.angle_ns(&place);
        self.waiting.push(Waiting { tag, write, lba, sectors, place, angle, arrived: now });
    }
}

impl Drive for Hdd {}

impl BlockDevice for Hdd {
    type Event = HddEvent;

    fn capacity(&self) -> u64 {
        self.cfg.capacity_bytes
    }

    fn queue_depth(&self) -> u32 {
        self.cfg.queue_depth
    }

    fn rotational(&self) -> bool {
        true
    }

    fn submit(&mut self, req: DeviceRequest, ctx: &mut impl DeviceCtx<HddEvent>) {
        self.reqs.insert(&req);
        let done = self.front.command(ctx.now(), req.op);
        ctx.schedule(done, HddEvent::Command { tag: req.tag });
    }

    fn handle(&mut self, event: HddEvent, ctx: &mut impl DeviceCtx<HddEvent>) {
        let now = ctx.now();
        match event {
            HddEvent::Command { tag } => {
                let r = self.reqs[tag as usize];
                match r.op.expect("request state") {
                    Op::Read => {
                        let (lba, n) = self.sectors(r.offset, r.len);
                        match self.cache.lookup(lba, n, now) {
                            ReadHit::Cached => {
                                self.report.cache_read_hits += 1;
                                ctx.schedule(self.front.to_host(now, r.len), HddEvent::LinkDone { tag });
                            }
                            ReadHit::Streaming(at) => {
                                self.report.read_ahead_hits += 1;
                                ctx.schedule(at, HddEvent::Ready { tag });
                            }
                            ReadHit::Miss => {
                                self.wait_for_head(tag, false, now);
                                self.kick(ctx);
                            }
                        }
                    }
                    Op::Write => ctx.schedule(self.front.from_host(now, r.len), HddEvent::DataIn { tag }),
                    // No mapping to update on a conventional disk.
                    Op::Trim => ctx.complete(tag),
                    // A flush covers the writes the cache took before it (not later ones).
                    Op::Flush => {
                        let upto = self.cache.admitted();
                        if self.cache.clean_up_to(upto) {
                            ctx.complete(tag);
                        } else {
                            self.flushes.push((tag, upto));
                            self.kick(ctx);
                        }
                    }
                }
            }
            HddEvent::DataIn { tag } => {
                let r = self.reqs[tag as usize];
                self.host_bytes_written += r.len;
                let (lba, n) = self.sectors(r.offset, r.len);
                if !self.cache.write_back() {
                    self.wait_for_head(tag, true, now);
                } else if self.blocked_writes.is_empty() && self.cache.admit_write(lba, n) {
                    self.report.cached_writes += 1;
                    ctx.complete(tag);
                } else {
                    self.blocked_writes.push_back(tag);
                }
                self.kick(ctx);
            }
            HddEvent::HeadDone => {
                match self.access.take().expect("an access under way") {
                    Access::Host { tag, write: false, lba, sectors } => {
                        let rate = self.geo.streaming_sectors_per_ns(lba + sectors - 1);
                        self.cache.media_read(lba, sectors, now, rate);
                        let len = self.reqs[tag as usize].len;
                        ctx.schedule(self.front.to_host(now, len), HddEvent::LinkDone { tag });
                    }
                    Access::Host { tag, write: true, .. } => ctx.complete(tag),
                    Access::Destage(x) => {
                        self.report.destaged_bytes += x.sectors * self.geo.sector_bytes;
                        self.cache.destaged(x);
                        self.cache_room(ctx);
                    }
                }
                self.kick(ctx);
            }
            HddEvent::Ready { tag } => {
                let len = self.reqs[tag as usize].len;
                ctx.schedule(self.front.to_host(now, len), HddEvent::LinkDone { tag });
            }
            HddEvent::LinkDone { tag } => {
                self.host_bytes_read += self.reqs[tag as usize].len;
                ctx.complete(tag);
            }
        }
    }

    fn end_run(&mut self, now: Time) {
        self.run_ended_at = now;
    }

    fn has_internal_work(&self) -> bool {
        self.cache.dirty_sectors() > 0
    }

    /// The write cache's dirty sectors (those being destaged too): disks have no power-loss
    /// protection, and carry flushes out.
    fn volatile(&self) -> super::Volatile {
        super::Volatile { bytes: self.cache.dirty_sectors() * self.geo.sector_bytes, ..Default::default() }
    }

    fn lost_ranges(&self) -> Option<Vec<super::LostRange>> {
        let s = self.geo.sector_bytes;
        let runs = self.cache.unwritten().map(|x| super::LostRange { offset: x.lba * s, len: x.sectors * s, promised: false });
        Some(super::merge_lost(runs.collect()))
    }

    fn begin_run(&mut self) -> Time {
        // Events of an earlier run are gone: nothing is under way any more.
        self.access = None;
        self.waiting.clear();
        self.blocked_writes.clear();
        self.flushes.clear();
        self.head_busy.busy_until().max(self.front.busy_until()).max(self.run_ended_at)
    }

    fn internal_report(&self, at: Time) -> DeviceReport {
        DeviceReport {
            kind: DeviceKind::Hdd,
            host_bytes_written: self.host_bytes_written,
            host_bytes_read: self.host_bytes_read,
            media_bytes_written: self.media_bytes_written,
            media_bytes_read: self.media_bytes_read,
            die_busy_ns: self.head_busy.busy_by(at),
            dies: 1,
            channel_busy_ns: Vec::new(),
            controller_busy_ns: self.front.controller_busy_by(at),
            controller_cores: self.front.cores(),
            thermal: None,
            nand: None,
            array: None,
            hdd: Some(HddReport { dirty_bytes: self.cache.dirty_sectors() * self.geo.sector_bytes, ..self.report.clone() }),
            remap: None,
        }
    }
}
