//! Timing model of a NAND SSD: host link → controller → write buffer → FTL → channels and
//! dies. Every shared resource is a FIFO server; a request moves stage to stage by events.
//!
//! Read:  controller → (per flash page) die sense tR → channel transfer → link → complete.
//! Write: controller → link (data in) → write buffer → complete (write-back) — and, apart
//!        from the host, program units leave the buffer for dies with room in their queue
//!        (SLC or native units, as the FTL's cache state says): channel → die program.
//! GC runs in the FTL, a little per host unit once a die is short of free blocks; the die
//! owes its reads, programs and erases and works them off an operation at a time (see
//! `backlog`): reads cut in, host programs wait behind. When the host has been idle, the
//! drive flushes its buffer, folds SLC data and collects ahead.

mod backlog;
pub mod config;
pub mod ftl;
pub mod precondition;
pub mod state_cache;

use std::collections::hash_map::Entry;
use std::collections::VecDeque;

use rustc_hash::FxHashMap;

use crate::device::{BlockDevice, DeviceCtx, InDevice, RequestTable, Drive};
use crate::report::{DeviceKind, DeviceReport, NandReport};
use crate::io::{DeviceRequest, Op, Tag};
use crate::device::frontend::FrontEnd;
use crate::device::thermal::Thermal;
use crate::engine::timer::Timer;
use crate::engine::divide::{Div32, Div64};
use crate::engine::{FifoServer, Time, TransferRate};
use crate::error::ConfigError;
pub use config::{
    ControllerConfig, FoldPolicy, FtlConfig, GcPolicy, HostInterface, NandConfig, SlcCacheConfig, SsdConfig,
};
use backlog::{Backlog, Step};
use ftl::{Ftl, GcWork, Mode};
pub use precondition::{precondition, precondition_kept, precondition_watched, Precondition};
pub use state_cache::StateCache;

const NO_TAG: Tag = Tag::MAX;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SsdEvent {
    /// The controller finished its part of a command.
    ControllerDone { tag: Tag },
    /// A die finished sensing a page for a read; its data now crosses the channel.
    PageRead { tag: Tag, die: u16, ius: u16 },
    /// A read's page crossed the channel into the controller.
    PageTransferred { tag: Tag },
    /// The host link finished moving a request's data.
    LinkDone { tag: Tag },
    /// A program unit crossed the channel to its die.
    UnitTransferred { unit: u32 },
    /// A die finished programming a unit.
    UnitProgrammed { unit: u32 },
    /// The host may have been idle long enough for background work (token of the idle timer).
    IdleCheck { token: u32 },
    /// A die's queue has room again: send buffered data.
    RetryDispatch,
    /// The controller reads its temperature sensor.
    ThermalSample,
    /// A die may take the next step of the work it owes (GC, folding, queued programs).
    BacklogStep { die: u32 },
}

#[derive(Clone, Copy, Debug)]
struct BufferedIu {
    lpn: u32,
    /// Write-through only: the request waiting for this IU to be programmed.
    tag: Tag,
}

#[derive(Clone, Debug, Default)]
struct UnitState {
    block: u32,
    die: u32,
    host_ius: u32,
    /// Programmed in SLC mode (one page per plane, SLC timing).
    slc: bool,
    /// Position in the order of dispatch, for flush bookkeeping.
    dispatch_no: u64,
    /// Write-through only: requests waiting for this unit, and how many of their IUs it holds.
    waiters: Vec<(Tag, u32)>,
}

/// A multi-plane read a die was given: reads on other planes at the same page address join
/// it until its sense begins.
#[derive(Clone, Copy, Debug, Default)]
struct ReadGroup {
    start: Time,
    end: Time,
    /// One bit per plane already in the group.
    planes: u64,
    page: u32,
    read_ns: Time,
}

#[derive(Clone, Copy, Debug)]
struct InFlightUnit {
    start_seq: u64,
    done: bool,
}

/// An SSD: configuration, flash state and the servers that give it timing.
pub struct Ssd {
    cfg: SsdConfig,
    ftl: Ftl,
    iu_bytes: u64,
    /// `iu_bytes` and the channel count as divisors (every request divides by them).
    iu_div: Div64,
    channel_div: Div32,
    /// A channel's transfer times (the rate is the configuration's).
    channel_rate: TransferRate,
    front: FrontEnd,
    dies: Vec<FifoServer>,
    /// Work each die owes (GC, folding, and host programs queued behind it), run an operation
    /// at a time; reads cut in between.
    backlogs: Vec<Backlog>,
    channels: Vec<FifoServer>,
    /// Per die, the multi-plane reads that have not begun sensing, which later reads may join
    /// (empty when the profile has no multi-plane reads).
    read_groups: Vec<Vec<ReadGroup>>,
    reqs: RequestTable,
    // Write buffer.
    buffered: VecDeque<BufferedIu>,
    /// How many entries of `buffered` hold each logical IU (for read hits and merges).
    /// Looked up and updated for every IU written and never iterated (its order cannot reach
    /// the results), so hashed with Fx: SipHash's resistance to chosen keys buys nothing here.
    buffered_index: FxHashMap<u32, u32>,
    buffered_seq_start: u64,
    next_seq: u64,
    buffer_used: u64,
    waiting_writes: VecDeque<Tag>,
    units: Vec<UnitState>,
    free_units: Vec<u32>,
    in_flight: VecDeque<InFlightUnit>,
    in_flight_base: u64,
    /// Logical IUs sent to the dies and not yet below the durable floor, in sequence order
    /// (sequence numbers from the floor to `buffered_seq_start`): where a power cut's losses
    /// lie, with the buffer's.
    unsettled: VecDeque<u32>,
    flushes: Vec<(Tag, u64)>,
    die_cursor: u32,
    /// When each die should be free counting units sent to it but not yet on it (in
    /// channel transfer): what the controller knows of its own queues when it picks a die.
    die_committed: Vec<Time>,
    /// How far ahead of now a die's queue may reach before it takes no more units: the
    /// controller keeps a couple of programs queued per die, not the whole buffer, so that
    /// reads are not stuck behind a long backlog.
    queue_horizon: Time,
    retry_at: Option<Time>,
    scratch: Vec<u32>,
    /// Host requests inside the device, and the idle spell they last left (for background work).
    outstanding: u64,
    idle: Timer,
    // Counters.
    host_bytes_written: u64,
    host_bytes_read: u64,
    nand_bytes_read: u64,
    rmw_reads: u64,
    buffer_read_hits: u64,
    /// IUs read that were never written: zeros from the controller, no flash read.
    unwritten_reads: u64,
    buffer_merges: u64,
    gc: GcWork,
    thermal: Option<Thermal>,
    /// When the host finished the last run (its clock reached at least this far).
    run_ended_at: Time,
}

impl Ssd {
    /// Build a drive; `seed` drives its internal randomness (controller time variation).
    pub fn new(cfg: SsdConfig, seed: u64) -> Result<Ssd, ConfigError> {
        cfg.validate()?;
        let ftl = Ftl::new(&cfg);
        let dies = cfg.dies() as usize;
        Ok(Ssd {
            iu_bytes: cfg.ftl.iu_bytes,
            iu_div: Div64::new(cfg.ftl.iu_bytes),
            channel_div: Div32::new(cfg.nand.channels),
            channel_rate: TransferRate::new(cfg.nand.channel_bytes_per_s),
            front: FrontEnd::new(&cfg.interface, &cfg.controller, seed),
            dies: vec![FifoServer::default(); dies],
            backlogs: vec![Backlog::default(); dies],
            channels: vec![FifoServer::default(); cfg.nand.channels as usize],
            read_groups: if cfg.nand.multi_plane_read { vec![Vec::new(); dies] } else { Vec::new() },
            reqs: RequestTable::default(),
            buffered: VecDeque::new(),
            buffered_index: FxHashMap::default(),
            buffered_seq_start: 0,
            next_seq: 0,
            buffer_used: 0,
            waiting_writes: VecDeque::new(),
            units: Vec::new(),
            free_units: Vec::new(),
            in_flight: VecDeque::new(),
            in_flight_base: 0,
            unsettled: VecDeque::new(),
            flushes: Vec::new(),
            die_cursor: 0,
            die_committed: vec![0; dies],
            queue_horizon: 2 * cfg.nand.program_ns.max(cfg.slc_cache.as_ref().map_or(0, |c| c.program_ns)),
            retry_at: None,
            scratch: Vec::new(),
            outstanding: 0,
            idle: Timer::default(),
            host_bytes_written: 0,
            host_bytes_read: 0,
            nand_bytes_read: 0,
            rmw_reads: 0,
            buffer_read_hits: 0,
            unwritten_reads: 0,
            buffer_merges: 0,
            gc: GcWork::default(),
            thermal: cfg.thermal.clone().map(|t| Thermal::new(t, cfg.dies())),
            run_ended_at: 0,
            ftl,
            cfg,
        })
    }

    pub fn config(&self) -> &SsdConfig {
        &self.cfg
    }

    pub fn ftl(&self) -> &Ftl {
        &self.ftl
    }

    /// Mutable FTL access for preconditioning (state only, no time passes).
    pub fn ftl_mut(&mut self) -> &mut Ftl {
        &mut self.ftl
    }

    #[inline]
    fn channel_of(&self, die: u32) -> usize {
        // Consecutive dies sit on different channels, so striping spreads over channels first.
        self.channel_div.rem(die) as usize
    }


    fn read_ns_of(&self, slot: u32) -> Time {
        match &self.cfg.slc_cache {
            Some(c) if self.ftl.is_slc_slot(slot) => c.read_ns,
            _ => self.cfg.nand.read_ns,
        }
    }

    /// Put `ns` of work on a die (program, read, GC); returns when it ends. A throttled
    /// drive leaves gaps between operations, so the die is taken for longer.
    fn occupy_die(&mut self, die: u32, now: Time, ns: Time) -> Time {
        let ns = match &mut self.thermal {
            Some(t) => t.occupy(ns),
            None => ns,
        };
        self.dies[die as usize].reserve(now, ns)
    }

    /// Report a request complete; when none is left inside, an idle spell begins.
    #[inline]
    fn finish(&mut self, tag: Tag, ctx: &mut impl DeviceCtx<SsdEvent>) {
        self.outstanding -= 1;
        ctx.complete(tag);
        if self.outstanding == 0 && self.wants_background() {
            ctx.schedule(ctx.now() + self.cfg.idle_after_ns, SsdEvent::IdleCheck { token: self.idle.token() });
        }
    }

    fn fold_policy(&self) -> Option<FoldPolicy> {
        self.cfg.slc_cache.as_ref().map(|c| c.fold)
    }

    fn wants_background(&self) -> bool {
        self.fold_policy().is_some() || self.cfg.ftl.background_gc_blocks > 0
    }

    /// Idle long enough: give each free die one step of background work (folding SLC data,
    /// then background GC); look again when the first of them finishes.
    fn background(&mut self, token: u32, ctx: &mut impl DeviceCtx<SsdEvent>) {
        if !self.idle.is_current(token) || self.outstanding > 0 {
            return;
        }
        // Buffered data goes to flash first, as a drive flushes its cache when idle.
        self.dispatch(true, ctx);
        let now = ctx.now();
        let fold = self.fold_policy().is_some();
        let mut next: Option<Time> = None;
        for die in 0..self.dies.len() as u32 {
            let busy = self.die_free_at(die, now);
            if busy > now {
                if self.ftl.has_background_work(die, fold) {
                    next = Some(next.map_or(busy, |t: Time| t.min(busy)));
                }
                continue;
            }
            if let Some(work) = self.ftl.background_step(die, fold) {
                let done = self.charge_gc(die, work, ctx);
                next = Some(next.map_or(done, |t: Time| t.min(done)));
            }
        }
        if let Some(t) = next {
            ctx.schedule(t.max(now + 1), SsdEvent::IdleCheck { token });
        }
    }

    fn iu_range(&self, offset: u64, len: u64) -> (u32, u32) {
        let first = self.iu_div.div(offset);
        let last = self.iu_div.div_ceil(offset + len);
        (first as u32, last as u32)
    }

    /// Whether `lpn` waits in the write buffer (not yet sent to a die).
    #[inline]
    fn is_buffered(&self, lpn: u32) -> bool {
        !self.buffered_index.is_empty() && self.buffered_index.contains_key(&lpn)
    }

    /// The events [`BlockDevice::handle`] does not take inline: writes, trims, flushes,
    /// programs and the drive's own work.
    #[inline(never)]
    fn handle_other(&mut self, event: SsdEvent, ctx: &mut impl DeviceCtx<SsdEvent>) {
        match event {
            SsdEvent::ControllerDone { tag } => {
                let r = self.reqs[tag as usize];
                match r.op.expect("request state") {
                    Op::Read => unreachable!("reads start in handle"),
                    Op::Write => {
                        let done = self.front.from_host(ctx.now(), r.len);
                        ctx.schedule(done, SsdEvent::LinkDone { tag });
                    }
                    Op::Trim => self.trim(tag, ctx),
                    Op::Flush => {
                        let target = self.next_seq;
                        if self.durable_floor() >= target {
                            self.finish(tag, ctx);
                        } else {
                            self.flushes.push((tag, target));
                            self.dispatch(true, ctx);
                        }
                    }
                }
            }
            SsdEvent::PageRead { .. } | SsdEvent::PageTransferred { .. } => unreachable!("read events are handled in handle"),
            SsdEvent::LinkDone { tag } => {
                let r = self.reqs[tag as usize];
                match r.op {
                    Some(Op::Write) => {
                        self.waiting_writes.push_back(tag);
                        self.admit_writes(ctx);
                    }
                    other => unreachable!("link transfer for {other:?}"),
                }
            }
            SsdEvent::UnitTransferred { unit } => {
                let u = &self.units[unit as usize];
                let t = match (&self.cfg.slc_cache, u.slc) {
                    (Some(c), true) => c.program_ns,
                    _ => self.cfg.nand.program_ns,
                };
                let die = u.die;
                if self.backlogs[die as usize].is_empty() {
                    let done = self.occupy_die(die, ctx.now(), t);
                    ctx.schedule(done, SsdEvent::UnitProgrammed { unit });
                } else {
                    // GC owed on this die frees the space this unit goes to: it waits its turn.
                    self.backlogs[die as usize].push_program(unit, t);
                }
            }
            SsdEvent::UnitProgrammed { unit } => self.unit_programmed(unit, ctx),
            SsdEvent::IdleCheck { token } => self.background(token, ctx),
            SsdEvent::BacklogStep { die } => self.backlog_step(die, ctx),
            SsdEvent::ThermalSample => {
                let now = ctx.now();
                if let Some(t) = &mut self.thermal {
                    ctx.schedule(t.sample(now), SsdEvent::ThermalSample);
                }
            }
            SsdEvent::RetryDispatch => {
                self.retry_at = None;
                let force = self.write_through() || !self.flushes.is_empty();
                self.dispatch(force, ctx);
                self.admit_writes(ctx);
            }
        }
    }

    // ---- reads -------------------------------------------------------------------------

    fn start_read(&mut self, tag: Tag, ctx: &mut impl DeviceCtx<SsdEvent>) {
        let now = ctx.now();
        let InDevice { offset, len, .. } = self.reqs[tag as usize];
        let (first, last) = self.iu_range(offset, len);
        if last == first + 1 {
            // One IU (a small random read): one page read at most, without the runs below.
            let outstanding = match self.ftl.lookup(first) {
                Some(s) if self.ftl.is_programmed(s) && !self.is_buffered(first) => {
                    let (die, read_ns) = (self.ftl.die_of_slot(s), self.read_ns_of(s));
                    self.issue_page_read(tag, die, s, 1, read_ns, now, ctx);
                    1
                }
                Some(_) => {
                    self.buffer_read_hits += 1;
                    0
                }
                None => {
                    self.unwritten_reads += 1;
                    0
                }
            };
            self.reqs[tag as usize].outstanding = outstanding;
            if outstanding == 0 {
                self.send_read_data(tag, ctx);
            }
            return;
        }
        let mut outstanding = 0;
        // Consecutive IUs in the same flash page are sensed once.
        let mut run: Option<(u32, u32, u32, u32)> = None; // (die, page, ius, first slot)
        let mut read_ns = self.cfg.nand.read_ns;
        for lpn in first..last {
            let slot = match self.ftl.lookup(lpn) {
                Some(s) if self.ftl.is_programmed(s) && !self.is_buffered(lpn) => s,
                Some(_) => {
                    self.buffer_read_hits += 1;
                    continue;
                }
                None => {
                    // never written: the controller returns zeros
                    self.unwritten_reads += 1;
                    continue;
                }
            };
            let die = self.ftl.die_of_slot(slot);
            let page = self.ftl.page_of_slot(slot);
            match run {
                Some((d, p, n, s)) if d == die && p == page => run = Some((d, p, n + 1, s)),
                _ => {
                    if let Some((d, _, n, s)) = run {
                        self.issue_page_read(tag, d, s, n, read_ns, now, ctx);
                        outstanding += 1;
                    }
                    run = Some((die, page, 1, slot));
                    read_ns = self.read_ns_of(slot);
                }
            }
        }
        if let Some((d, _, n, s)) = run {
            self.issue_page_read(tag, d, s, n, read_ns, now, ctx);
            outstanding += 1;
        }
        self.reqs[tag as usize].outstanding = outstanding;
        if outstanding == 0 {
            self.send_read_data(tag, ctx);
        }
    }

    // Inlined: out of line, its eight arguments would not all fit in registers.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn issue_page_read(
        &mut self,
        tag: Tag,
        die: u32,
        slot: u32,
        ius: u32,
        read_ns: Time,
        now: Time,
        ctx: &mut impl DeviceCtx<SsdEvent>,
    ) {
        let bytes = ius as u64 * self.iu_bytes;
        self.nand_bytes_read += bytes;
        let done = if self.read_groups.is_empty() {
            self.occupy_die(die, now, read_ns)
        } else {
            self.sense_multi_plane(die, slot, read_ns, now)
        };
        debug_assert!(die <= u16::MAX as u32 && ius <= u16::MAX as u32);
        ctx.schedule(done, SsdEvent::PageRead { tag, die: die as u16, ius: ius as u16 });
    }

    /// Sense the page holding `slot` as part of a multi-plane read; returns when the sense
    /// ends. The read joins any group queued on the die that has not begun sensing, has no
    /// read on this plane yet, reads the same page address (ONFI's multi-plane rule; blocks
    /// may differ) and the same kind of block (an SLC and a native sense are different
    /// operations): the controller issues the reads pending for a die's planes together, as
    /// MQSim's flash scheduler does. The group keeps its place and its time. Otherwise the
    /// read starts a group at the end of the die's queue.
    // Out of line: the single-plane read path stays as short as it was.
    #[inline(never)]
    fn sense_multi_plane(&mut self, die: u32, slot: u32, read_ns: Time, now: Time) -> Time {
        let (plane, page) = self.ftl.plane_page_of_slot(slot);
        let bit = 1u64 << plane;
        let groups = &mut self.read_groups[die as usize];
        groups.retain(|g| g.start >= now);
        if let Some(g) = groups.iter_mut().find(|g| g.planes & bit == 0 && g.page == page && g.read_ns == read_ns) {
            g.planes |= bit;
            return g.end;
        }
        let start = self.dies[die as usize].busy_until().max(now);
        let end = self.occupy_die(die, now, read_ns);
        self.read_groups[die as usize].push(ReadGroup { start, end, planes: bit, page, read_ns });
        end
    }

    fn send_read_data(&mut self, tag: Tag, ctx: &mut impl DeviceCtx<SsdEvent>) {
        let len = self.reqs[tag as usize].len;
        let done = self.front.to_host(ctx.now(), len);
        ctx.schedule(done, SsdEvent::LinkDone { tag });
    }

    // ---- writes ------------------------------------------------------------------------

    fn write_through(&self) -> bool {
        self.cfg.write_buffer_bytes == 0
    }

    /// Admit waiting writes into the buffer, first come first served.
    fn admit_writes(&mut self, ctx: &mut impl DeviceCtx<SsdEvent>) {
        while let Some(&tag) = self.waiting_writes.front() {
            let InDevice { offset, len, .. } = self.reqs[tag as usize];
            let (first, last) = self.iu_range(offset, len);
            let need = (last - first) as u64 * self.iu_bytes;
            let fits = self.buffer_used + need <= self.cfg.write_buffer_bytes;
            if !(fits || self.buffer_used == 0 || self.write_through()) {
                // Space frees only as units finish programming. With none in flight, send the
                // partial unit too, or the write would wait for space nothing will release.
                if self.in_flight.is_empty() {
                    self.dispatch(true, ctx);
                }
                break;
            }
            self.waiting_writes.pop_front();
            self.insert_write(tag, offset, len, ctx);
        }
    }

    fn insert_write(&mut self, tag: Tag, offset: u64, len: u64, ctx: &mut impl DeviceCtx<SsdEvent>) {
        let now = ctx.now();
        let (first, last) = self.iu_range(offset, len);
        let iu = self.iu_bytes;
        let mut added = 0u64;
        for lpn in first..last {
            let lo = lpn as u64 * iu;
            let partial = offset > lo || offset + len < lo + iu;
            // Data for an IU still waiting in the buffer is merged into it (write-back only:
            // a write-through write must wait for its own program).
            if !self.write_through() && self.is_buffered(lpn) {
                self.buffer_merges += 1;
                continue;
            }
            if partial {
                self.read_for_merge(lpn, now);
            }
            added += 1;
            if self.buffered.is_empty() {
                self.buffered_seq_start = self.next_seq;
            }
            // The map entry is needed when this unit is placed, a few writes from now.
            self.ftl.prefetch(lpn);
            let waiter = if self.write_through() { tag } else { NO_TAG };
            self.buffered.push_back(BufferedIu { lpn, tag: waiter });
            *self.buffered_index.entry(lpn).or_insert(0) += 1;
            self.next_seq += 1;
        }
        if self.write_through() {
            // Complete when every IU is programmed, however many units they end up in and
            // whenever those are sent.
            self.reqs[tag as usize].outstanding = added as u32;
        } else {
            self.buffer_used += added * iu;
        }
        self.host_bytes_written += len;
        let force = self.write_through() || !self.flushes.is_empty();
        self.dispatch(force, ctx);
        if !self.write_through() {
            self.finish(tag, ctx);
        }
    }

    /// A write covering part of an IU needs the rest of it from flash (read-modify-write).
    fn read_for_merge(&mut self, lpn: u32, now: Time) {
        if self.is_buffered(lpn) {
            return;
        }
        if let Some(slot) = self.ftl.lookup(lpn) {
            if self.ftl.is_programmed(slot) {
                let die = self.ftl.die_of_slot(slot);
                let t = self.read_ns_of(slot);
                self.occupy_die(die, now, t);
                self.nand_bytes_read += self.iu_bytes;
                self.rmw_reads += 1;
            }
        }
    }

    /// Move buffered IUs to dies a program unit at a time; `force` also sends a partial unit
    /// (padded), as a flush, a trim or write-through requires.
    fn dispatch(&mut self, force: bool, ctx: &mut impl DeviceCtx<SsdEvent>) {
        self.dispatch_within(force, ctx.now() + self.queue_horizon, ctx);
    }

    /// Send buffered data to dies whose queues end before `horizon`; if some wait only for
    /// room, look again when the first die has room.
    fn dispatch_within(&mut self, force: bool, horizon: Time, ctx: &mut impl DeviceCtx<SsdEvent>) {
        while !self.buffered.is_empty() {
            // Overwrites placed on one die may have given garbage to a die whose GC had given up.
            if self.ftl.has_unstuck() {
                while let Some((die, gc)) = self.ftl.collect_starved() {
                    self.charge_gc(die, gc, ctx);
                }
            }
            // Less buffered than any program unit holds, and not forced: once a die is found
            // the loop stops, whichever it is, so the first die ready by the horizon settles
            // it (usually the first looked at). When none is, the search goes on over all of
            // them, as it would, for the retry.
            let short = !force && self.buffered.len() < self.smallest_unit();
            let die = match self.pick_die(ctx.now(), horizon, short) {
                Ok(_) if short => break,
                Ok(d) => d,
                Err(Some(free_at)) => {
                    let at = free_at.saturating_sub(self.queue_horizon).max(ctx.now() + 1);
                    if self.retry_at.is_none_or(|t| at < t) {
                        self.retry_at = Some(at);
                        ctx.schedule(at, SsdEvent::RetryDispatch);
                    }
                    break;
                }
                Err(None) => break,
            };
            let mode = self.ftl.host_mode(die);
            let per_unit = self.ftl.unit_ius(mode) as usize;
            if self.buffered.len() < per_unit && !force {
                break;
            }
            self.die_cursor = (die + 1) % self.dies.len() as u32;
            let n = self.buffered.len().min(per_unit);
            let start_seq = self.buffered_seq_start;
            let unit = self.alloc_unit();
            self.scratch.clear();
            for _ in 0..n {
                let b = self.buffered.pop_front().expect("buffered IU");
                if let Entry::Occupied(mut e) = self.buffered_index.entry(b.lpn) {
                    *e.get_mut() -= 1;
                    if *e.get() == 0 {
                        e.remove();
                    }
                }
                self.scratch.push(b.lpn);
                if b.tag != NO_TAG {
                    let u = &mut self.units[unit as usize];
                    match u.waiters.last_mut() {
                        Some((t, n)) if *t == b.tag => *n += 1,
                        _ => u.waiters.push((b.tag, 1)),
                    }
                }
            }
            self.buffered_seq_start += n as u64;
            self.unsettled.extend(&self.scratch);
            let placement = self.ftl.place_host_unit_in(die, &self.scratch, mode);
            let now = ctx.now();
            self.charge_gc(die, placement.gc, ctx);
            if mode == Mode::Native && self.fold_policy() == Some(FoldPolicy::Pressure) && self.ftl.has_slc_cache() {
                // The cache is full: fold on this die as the host writes (paid in its time).
                if let Some(work) = self.ftl.background_step(die, true) {
                    self.charge_gc(die, work, ctx);
                }
            }
            let dispatch_no = self.in_flight_base + self.in_flight.len() as u64;
            self.in_flight.push_back(InFlightUnit { start_seq, done: false });
            let slc = mode == Mode::Slc;
            let u = &mut self.units[unit as usize];
            u.block = placement.block;
            u.die = die;
            u.host_ius = n as u32;
            u.slc = slc;
            u.dispatch_no = dispatch_no;
            let bytes = if slc { self.cfg.slc_program_unit_bytes() } else { self.cfg.program_unit_bytes() };
            let xfer = self.channel_rate.ns(bytes);
            let program = match (&self.cfg.slc_cache, slc) {
                (Some(c), true) => c.program_ns,
                _ => self.cfg.nand.program_ns,
            };
            let program = self.thermal.as_ref().map_or(program, |t| t.stretched(program));
            let d = die as usize;
            self.die_committed[d] = self.die_committed[d].max(self.die_free_at(die, now)).max(now + xfer) + program;
            let ch = self.channel_of(die);
            let done = self.channels[ch].reserve(now, xfer);
            ctx.schedule(done, SsdEvent::UnitTransferred { unit });
        }
    }

    /// The die that will be free soonest among those that can take host data; ties go
    /// round-robin so an idle drive stripes across all dies. Dies whose queue reaches past
    /// `horizon` are full for now: then the error gives when the first of them frees up
    /// (None if no die can take data at all). `first_ready`: any die free by `horizon` will
    /// do, the first found (the error is the same).
    fn pick_die(&self, now: Time, horizon: Time, first_ready: bool) -> Result<u32, Option<Time>> {
        let dies = self.dies.len() as u32;
        let mut best: Option<(Time, u32)> = None;
        // Round-robin from the cursor, wrapping by a compare rather than a division per die
        // (this runs for every buffered write).
        let mut d = self.die_cursor;
        for _ in 0..dies {
            if self.ftl.accepts_host_data(d) {
                let t = self.die_free_at(d, now).max(self.die_committed[d as usize]);
                if first_ready && t <= horizon {
                    return Ok(d);
                }
                if best.is_none_or(|(bt, _)| t < bt) {
                    best = Some((t, d));
                }
            }
            d += 1;
            if d == dies {
                d = 0;
            }
        }
        match best {
            Some((t, d)) if t <= horizon => Ok(d),
            Some((t, _)) => Err(Some(t)),
            None => Err(None),
        }
    }

    /// The fewest IUs a program unit of host data holds, in any mode.
    #[inline]
    fn smallest_unit(&self) -> usize {
        self.ftl.unit_ius(Mode::Native).min(self.ftl.unit_ius(Mode::Slc)) as usize
    }

    fn alloc_unit(&mut self) -> u32 {
        match self.free_units.pop() {
            Some(u) => u,
            None => {
                self.units.push(UnitState::default());
                (self.units.len() - 1) as u32
            }
        }
    }

    fn unit_programmed(&mut self, unit: u32, ctx: &mut impl DeviceCtx<SsdEvent>) {
        let u = std::mem::take(&mut self.units[unit as usize]);
        // A block that finished programming may be the victim GC was waiting for.
        let count = self.ftl.unit_ius(if u.slc { Mode::Slc } else { Mode::Native });
        let gc = self.ftl.mark_programmed(u.block, count);
        self.charge_gc(u.die, gc, ctx);
        if !self.write_through() {
            self.buffer_used -= u.host_ius as u64 * self.iu_bytes;
        }
        for &(tag, ius) in &u.waiters {
            let r = &mut self.reqs[tag as usize];
            r.outstanding -= ius;
            if r.outstanding == 0 {
                self.finish(tag, ctx);
            }
        }
        let mut waiters = u.waiters;
        waiters.clear();
        self.units[unit as usize].waiters = waiters;
        self.free_units.push(unit);
        let idx = (u.dispatch_no - self.in_flight_base) as usize;
        self.in_flight[idx].done = true;
        while self.in_flight.front().is_some_and(|f| f.done) {
            self.in_flight.pop_front();
            self.in_flight_base += 1;
        }
        let floor = self.durable_floor();
        let unsettled = (self.buffered_seq_start - floor) as usize;
        self.unsettled.drain(..self.unsettled.len() - unsettled);
        self.complete_flushes(ctx);
        self.admit_writes(ctx);
        // Dies that had no room may take data again.
        let force = self.write_through() || !self.flushes.is_empty();
        self.dispatch(force, ctx);
    }

    /// Queue GC work on its die (on-die copy-back: no channel traffic), to run an operation at
    /// a time between host operations; returns when the die should have worked it off.
    fn charge_gc(&mut self, die: u32, gc: GcWork, ctx: &mut impl DeviceCtx<SsdEvent>) -> Time {
        let now = ctx.now();
        if !gc.is_empty() {
            let n = &self.cfg.nand;
            let (slc_read, slc_erase) = self.cfg.slc_cache.as_ref().map_or((0, 0), |c| (c.read_ns, c.erase_ns));
            let b = &mut self.backlogs[die as usize];
            // A relocation senses its pages, programs them elsewhere, and the emptied block is erased.
            b.push(n.read_ns, gc.page_reads);
            b.push(slc_read, gc.slc_page_reads);
            b.push(n.program_ns, gc.program_units);
            b.push(n.erase_ns, gc.erases - gc.slc_erases);
            b.push(slc_erase, gc.slc_erases);
            self.gc.add(gc);
            if b.step_at.is_none() {
                self.schedule_backlog_step(die, self.dies[die as usize].busy_until().max(now), ctx);
            }
        }
        self.die_free_at(die, now)
    }

    fn schedule_backlog_step(&mut self, die: u32, at: Time, ctx: &mut impl DeviceCtx<SsdEvent>) {
        self.backlogs[die as usize].step_at = Some(at);
        ctx.schedule(at, SsdEvent::BacklogStep { die });
    }

    /// When a die will have finished what it holds and what it owes.
    fn die_free_at(&self, die: u32, now: Time) -> Time {
        self.dies[die as usize].busy_until().max(now) + self.backlogs[die as usize].total_ns()
    }

    /// The die is free: run its next backlog operations (about one program's worth), unless a
    /// host operation took the die first, in which case wait for that one.
    fn backlog_step(&mut self, die: u32, ctx: &mut impl DeviceCtx<SsdEvent>) {
        let now = ctx.now();
        let busy = self.dies[die as usize].busy_until();
        if busy > now {
            self.schedule_backlog_step(die, busy, ctx);
            return;
        }
        let done = match self.backlogs[die as usize].take(self.cfg.nand.program_ns) {
            Some(Step::Internal(ns)) => self.occupy_die(die, now, ns),
            Some(Step::Program { unit, ns }) => {
                let done = self.occupy_die(die, now, ns);
                ctx.schedule(done, SsdEvent::UnitProgrammed { unit });
                done
            }
            None => now,
        };
        if self.backlogs[die as usize].is_empty() {
            self.backlogs[die as usize].step_at = None;
            // The die can take host data again.
            let force = self.write_through() || !self.flushes.is_empty();
            self.dispatch(force, ctx);
        } else {
            self.schedule_backlog_step(die, done, ctx);
        }
    }

    /// Sequence number below which every buffered IU is on flash.
    fn durable_floor(&self) -> u64 {
        if let Some(f) = self.in_flight.front() {
            f.start_seq
        } else if !self.buffered.is_empty() {
            self.buffered_seq_start
        } else {
            self.next_seq
        }
    }

    fn complete_flushes(&mut self, ctx: &mut impl DeviceCtx<SsdEvent>) {
        if self.flushes.is_empty() {
            return;
        }
        let floor = self.durable_floor();
        let mut i = 0;
        while i < self.flushes.len() {
            if floor >= self.flushes[i].1 {
                let (tag, _) = self.flushes.remove(i);
                self.finish(tag, ctx);
            } else {
                i += 1;
            }
        }
    }

    fn trim(&mut self, tag: Tag, ctx: &mut impl DeviceCtx<SsdEvent>) {
        // Buffered writes go first, however long the queues, so the trim cannot be
        // overtaken by older data.
        self.dispatch_within(true, Time::MAX, ctx);
        let InDevice { offset, len, .. } = self.reqs[tag as usize];
        let first = offset.div_ceil(self.iu_bytes) as u32;
        let last = ((offset + len) / self.iu_bytes) as u32;
        for lpn in first..last {
            self.ftl.trim(lpn);
        }
        self.finish(tag, ctx);
    }
}

impl Drive for Ssd {
    fn ftl(&self) -> Option<&Ftl> {
        Some(&self.ftl)
    }
    fn ftl_mut(&mut self) -> Option<&mut Ftl> {
        Some(&mut self.ftl)
    }
}

impl BlockDevice for Ssd {
    type Event = SsdEvent;

    fn lay_out(&mut self, runs: &[(u64, u64)]) {
        precondition::lay_out(&mut self.ftl, self.iu_bytes, runs);
    }

    fn capacity(&self) -> u64 {
        self.cfg.capacity_bytes
    }

    fn queue_depth(&self) -> u32 {
        self.cfg.queue_depth
    }

    #[inline]
    fn submit(&mut self, req: DeviceRequest, ctx: &mut impl DeviceCtx<SsdEvent>) {
        debug_assert!(req.offset + req.len <= self.cfg.capacity_bytes);
        self.reqs.insert(&req);
        if self.outstanding == 0 {
            self.idle.cancel(); // the idle spell is over
        }
        self.outstanding += 1;
        if let Some(at) = self.thermal.as_mut().and_then(|t| t.first_sample(ctx.now())) {
            ctx.schedule(at, SsdEvent::ThermalSample);
        }
        if req.op == Op::Read {
            self.ftl.prefetch(self.iu_div.div(req.offset) as u32);
        }
        let done = self.front.command(ctx.now(), req.op);
        ctx.schedule(done, SsdEvent::ControllerDone { tag: req.tag });
    }

    /// The read path's events are handled here, inlined into the event loop (a random read
    /// is four events, each otherwise a call with its prologue); the others out of line.
    #[inline(always)]
    fn handle(&mut self, event: SsdEvent, ctx: &mut impl DeviceCtx<SsdEvent>) {
        match event {
            SsdEvent::ControllerDone { tag } if self.reqs[tag as usize].op == Some(Op::Read) => self.start_read(tag, ctx),
            SsdEvent::PageRead { tag, die, ius } => {
                let ch = self.channel_of(die as u32);
                let xfer = self.channel_rate.ns(ius as u64 * self.iu_bytes);
                let done = self.channels[ch].reserve(ctx.now(), xfer);
                ctx.schedule(done, SsdEvent::PageTransferred { tag });
            }
            SsdEvent::PageTransferred { tag } => {
                let r = &mut self.reqs[tag as usize];
                r.outstanding -= 1;
                if r.outstanding == 0 {
                    self.send_read_data(tag, ctx);
                }
            }
            SsdEvent::LinkDone { tag } if self.reqs[tag as usize].op == Some(Op::Read) => {
                self.host_bytes_read += self.reqs[tag as usize].len;
                self.finish(tag, ctx);
            }
            other => self.handle_other(other, ctx),
        }
    }

    fn end_run(&mut self, now: Time) {
        self.run_ended_at = now;
        // Idle checks already scheduled belong to the spell that just began: void them.
        self.idle.cancel();
    }

    fn has_internal_work(&self) -> bool {
        !self.in_flight.is_empty() || self.retry_at.is_some() || self.backlogs.iter().any(|b| !b.is_empty())
    }

    /// Host data acknowledged from the write buffer and not yet programmed: the buffer's and
    /// that of programs under way, in write order from the oldest not durable (units done
    /// behind an older one still under way are counted too, as the drive's flush counts
    /// them). A flush is carried out, so none of it was promised. With power-loss
    /// protection the drive's capacitors program it all.
    fn volatile(&self) -> super::Volatile {
        if self.write_through() || self.cfg.power_loss_protection {
            return super::Volatile::default();
        }
        let ius = self.next_seq - self.durable_floor();
        super::Volatile { bytes: ius * self.iu_bytes, ..Default::default() }
    }

    /// The logical IUs of [`BlockDevice::volatile`]'s bytes.
    fn lost_ranges(&self) -> Option<Vec<super::LostRange>> {
        if self.write_through() || self.cfg.power_loss_protection {
            return Some(Vec::new());
        }
        debug_assert_eq!(self.unsettled.len() as u64, self.buffered_seq_start - self.durable_floor());
        let ius = self.unsettled.iter().chain(self.buffered.iter().map(|b| &b.lpn));
        let iu = self.iu_bytes;
        Some(super::merge_lost(ius.map(|&l| super::LostRange { offset: l as u64 * iu, len: iu, promised: false }).collect()))
    }

    fn begin_run(&mut self) -> Time {
        self.retry_at = None;
        for b in &mut self.backlogs {
            b.step_at = None;
        }
        if let Some(t) = &mut self.thermal {
            t.begin_run();
        }
        let servers = self.dies.iter().chain(&self.channels).map(|s| s.busy_until()).max().unwrap_or(0);
        servers.max(self.front.busy_until()).max(self.run_ended_at)
    }

    fn internal_report(&self, at: Time) -> DeviceReport {
        let c = &self.ftl.counters;
        let iu = self.iu_bytes;
        // Host program units are counted when placed (SLC units are a page per plane, native
        // ones `program_pages` pages); GC programs when collected.
        DeviceReport {
            kind: DeviceKind::NandSsd,
            host_bytes_written: self.host_bytes_written,
            host_bytes_read: self.host_bytes_read,
            media_bytes_written: (c.host_ius + c.padding_ius) * iu + c.gc_ius * iu,
            media_bytes_read: self.nand_bytes_read + self.gc.page_reads * self.cfg.nand.page_bytes,
            die_busy_ns: self.dies.iter().map(|d| d.busy_by(at)).sum(),
            dies: self.dies.len() as u32,
            channel_busy_ns: self.channels.iter().map(|c| c.busy_by(at)).collect(),
            controller_busy_ns: self.front.controller_busy_by(at),
            controller_cores: self.front.cores(),
            thermal: self.thermal.as_ref().map(|t| t.report(at)),
            nand: Some(NandReport {
                erase_count: c.erases,
                gc_runs: c.gc_runs,
                gc_relocated_bytes: c.gc_ius * iu,
                rmw_reads: self.rmw_reads,
                buffer_read_hits: self.buffer_read_hits,
                unwritten_read_ius: self.unwritten_reads,
                buffer_merges: self.buffer_merges,
                write_buffer_bytes_used: self.buffer_used,
                write_buffer_unplaced_bytes: self.buffered.len() as u64 * iu,
                free_blocks: self.ftl.free_blocks(),
                total_blocks: self.ftl.total_blocks(),
                max_block_erases: self.ftl.max_block_erases(),
                over_provisioning: self.cfg.over_provisioning(),
                slc_used_bytes: self.ftl.slc_used_ius() * iu,
                slc_budget_bytes: if self.ftl.has_slc_cache() { self.ftl.slc_budget_ius() * iu } else { 0 },
                slc_host_bytes: c.slc_ius * iu,
                folded_bytes: c.folded_ius * iu,
                mean_block_erases: self.ftl.mean_block_erases(),
                wear_level_moves: c.wear_level_moves,
                map_bytes: self.ftl.map_bytes(),
                gc_owed_ns: self.backlogs.iter().map(|b| b.total_ns()).sum(),
            }),
            array: None,
            hdd: None,
            remap: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{transfer_ns, EventQueue};

    /// A drive's events in time order, and the completions it reports.
    struct Ctx<'a> {
        sched: &'a mut EventQueue<SsdEvent>,
        done: &'a mut Vec<Tag>,
    }

    impl DeviceCtx<SsdEvent> for Ctx<'_> {
        fn now(&self) -> Time {
            self.sched.now()
        }
        fn schedule(&mut self, at: Time, event: SsdEvent) {
            self.sched.schedule(at, event);
        }
        fn complete(&mut self, tag: Tag) {
            self.done.push(tag);
        }
    }

    /// Submit one request now and run the drive until it completes; returns its latency.
    fn run_one(ssd: &mut Ssd, sched: &mut EventQueue<SsdEvent>, op: Op, offset: u64, len: u64) -> Time {
        let mut done = Vec::new();
        let start = sched.now();
        let req = DeviceRequest { tag: 3, op, offset, len, process: 0, sync: true };
        ssd.submit(req, &mut Ctx { sched: &mut *sched, done: &mut done });
        while done.is_empty() {
            let (_, e) = sched.pop().expect("the request completes");
            ssd.handle(e, &mut Ctx { sched: &mut *sched, done: &mut done });
        }
        assert_eq!(done, vec![3]);
        sched.now() - start
    }

    /// Reads of one IU take their own short path: each of its three cases (on flash, never
    /// written, waiting in the write buffer) costs what the general path's reads cost.
    #[test]
    fn one_iu_reads_cost_what_the_stages_add_up_to() {
        let cfg = SsdConfig::generic(1);
        let mut ssd = Ssd::new(cfg.clone(), 1).unwrap();
        precondition(&mut ssd, Precondition::Sequential, 1);
        let mut sched = EventQueue::new();
        let c = &cfg.controller;
        let link = |b: u64| transfer_ns(b, cfg.interface.bytes_per_s());
        let channel = |b: u64| transfer_ns(b, cfg.nand.channel_bytes_per_s);
        let command = c.read_busy_ns + c.latency_ns;
        // On flash: the command, a sense, the channel and the link.
        let t = run_one(&mut ssd, &mut sched, Op::Read, 1 << 20, 4096);
        assert_eq!(t, command + cfg.nand.read_ns + channel(4096) + link(4096));
        assert_eq!((ssd.nand_bytes_read, ssd.buffer_read_hits), (4096, 0));
        // Two IUs of one page (the general path) are sensed once, as one IU is.
        let t = run_one(&mut ssd, &mut sched, Op::Read, 2 << 20, 8192);
        assert_eq!(t, command + cfg.nand.read_ns + channel(8192) + link(8192));
        assert_eq!(ssd.nand_bytes_read, 4096 + 8192);
        // Never written: zeros from the controller, no flash read.
        let mut fresh = Ssd::new(cfg.clone(), 1).unwrap();
        assert_eq!(run_one(&mut fresh, &mut EventQueue::new(), Op::Read, 0, 4096), command + link(4096));
        assert_eq!((fresh.nand_bytes_read, fresh.buffer_read_hits, fresh.unwritten_reads), (0, 0, 1));
        assert_eq!(ssd.unwritten_reads, 0);
        // Overwritten, the new data still in the buffer: a buffer hit, no flash read.
        run_one(&mut ssd, &mut sched, Op::Write, 1 << 20, 4096);
        assert!(ssd.is_buffered((1 << 20) / 4096), "the write waits in the buffer");
        assert_eq!(run_one(&mut ssd, &mut sched, Op::Read, 1 << 20, 4096), command + link(4096));
        assert_eq!((ssd.nand_bytes_read, ssd.buffer_read_hits), (4096 + 8192, 1));
    }

    /// Submit 4 KiB reads of `lpns` all at once and run the drive until they complete;
    /// returns each one's completion time, in the order given.
    fn read_all(ssd: &mut Ssd, sched: &mut EventQueue<SsdEvent>, lpns: &[u32]) -> Vec<Time> {
        let mut done = Vec::new();
        for (i, &lpn) in lpns.iter().enumerate() {
            let req = DeviceRequest { tag: i as Tag, op: Op::Read, offset: lpn as u64 * 4096, len: 4096, process: 0, sync: true };
            ssd.submit(req, &mut Ctx { sched: &mut *sched, done: &mut done });
        }
        let mut at = vec![0; lpns.len()];
        let mut seen = 0;
        while seen < lpns.len() {
            let (_, e) = sched.pop().expect("the reads complete");
            ssd.handle(e, &mut Ctx { sched: &mut *sched, done: &mut done });
            for &tag in &done[seen..] {
                at[tag as usize] = sched.now();
            }
            seen = done.len();
        }
        at
    }

    /// A filled generic drive with `planes` planes per die, multi-plane reads on or off.
    fn filled(planes: u32, multi_plane: bool) -> Ssd {
        let mut cfg = SsdConfig::generic(1);
        // `generic` has two planes; with one, twice the blocks hold the same data.
        if planes < 2 {
            cfg.nand.blocks_per_plane *= 2;
        }
        cfg.nand.planes_per_die = planes;
        cfg.nand.multi_plane_read = multi_plane;
        let mut ssd = Ssd::new(cfg, 1).unwrap();
        precondition(&mut ssd, Precondition::Sequential, 1);
        ssd
    }

    /// Logical IUs on die 0 by (plane, page address, block), one IU per page.
    fn die0_layout(ssd: &Ssd) -> Vec<(u32, u32, u32, u32)> {
        let ftl = ssd.ftl();
        let mut out: Vec<(u32, u32, u32, u32)> = Vec::new();
        for lpn in 0..ftl.logical_ius() as u32 {
            let Some(slot) = ftl.lookup(lpn) else { continue };
            if ftl.die_of_slot(slot) != 0 {
                continue;
            }
            let (plane, page) = ftl.plane_page_of_slot(slot);
            let block = slot / ftl.ius_per_block;
            if !out.iter().any(|&(_, p, g, b)| (p, g, b) == (plane, page, block)) {
                out.push((lpn, plane, page, block));
            }
        }
        out
    }

    /// A 4 KiB read's parts, first principles from the profile: the controller's command
    /// handling, the array's sense (tR), the channel transfer and the host link transfer.
    fn read_timings(ssd: &Ssd) -> (Time, Time, Time, Time) {
        let cfg = ssd.config();
        let command = cfg.controller.read_busy_ns + cfg.controller.latency_ns;
        (command, cfg.nand.read_ns, transfer_ns(4096, cfg.nand.channel_bytes_per_s), transfer_ns(4096, cfg.interface.bytes_per_s()))
    }

    /// n 4 KiB reads on the n planes of one idle die at one page address share one sense:
    /// the last is in the host at command + tR + n transfers + its link transfer, not after
    /// n senses. Without multi-plane reads, the senses follow one another.
    #[test]
    fn multi_plane_reads_sense_once_and_transfer_in_turn() {
        for multi in [true, false] {
            let mut ssd = filled(4, multi);
            let layout = die0_layout(&ssd);
            let lpns: Vec<u32> = (0..4)
                .map(|plane| layout.iter().find(|&&(_, p, g, b)| p == plane && g == 5 && b == layout[0].3).unwrap().0)
                .collect();
            let cfg = ssd.config().clone();
            let c = &cfg.controller;
            let command = c.read_busy_ns + c.latency_ns;
            let (tr, xfer) = (cfg.nand.read_ns, transfer_ns(4096, cfg.nand.channel_bytes_per_s));
            let link = transfer_ns(4096, cfg.interface.bytes_per_s());
            let mut sched = EventQueue::new();
            let at = read_all(&mut ssd, &mut sched, &lpns);
            let last = *at.iter().max().unwrap();
            if multi {
                assert_eq!(last, command + tr + 4 * xfer + link, "one sense, four transfers");
            } else {
                assert_eq!(last, command + 4 * tr + xfer + link, "four senses in turn");
            }
        }
    }

    /// Two reads on one plane are never grouped, even at the same page address (in two
    /// blocks); two reads on two planes at different page addresses neither.
    #[test]
    fn multi_plane_groups_need_other_planes_and_one_page_address() {
        let mut ssd = filled(2, true);
        let layout = die0_layout(&ssd);
        let (command, tr, xfer, link) = read_timings(&ssd);
        let first = layout[0];
        let same_plane = layout.iter().find(|&&(_, p, g, b)| p == first.1 && g == first.2 && b != first.3).unwrap();
        let mut sched = EventQueue::new();
        let at = read_all(&mut ssd, &mut sched, &[first.0, same_plane.0]);
        assert_eq!(*at.iter().max().unwrap(), command + 2 * tr + xfer + link, "same plane: two senses");
        let other_page = layout.iter().find(|&&(_, p, g, _)| p != first.1 && g != first.2).unwrap();
        let start = sched.now();
        let at = read_all(&mut ssd, &mut sched, &[first.0, other_page.0]);
        assert_eq!(*at.iter().max().unwrap() - start, command + 2 * tr + xfer + link, "other page: two senses");
        let partner = layout.iter().find(|&&(_, p, g, _)| p != first.1 && g == first.2).unwrap();
        let start = sched.now();
        let at = read_all(&mut ssd, &mut sched, &[first.0, partner.0]);
        assert_eq!(*at.iter().max().unwrap() - start, command + tr + 2 * xfer + link, "a multi-plane pair");
    }

    /// A read joins a group still queued behind another read, not only the die's last one:
    /// A (plane 0), then B (plane 0, another page address), then C (plane 1, A's page
    /// address). C is sensed with A, before B: command + tR + two transfers, not after a
    /// third sense; B's sense still follows A's (one plane serializes).
    #[test]
    fn multi_plane_reads_join_a_group_queued_behind_others() {
        let mut ssd = filled(2, true);
        let layout = die0_layout(&ssd);
        let (command, tr, xfer, link) = read_timings(&ssd);
        let a = layout[0];
        let b = layout.iter().find(|&&(_, p, g, _)| p == a.1 && g != a.2).unwrap();
        let c = layout.iter().find(|&&(_, p, g, _)| p != a.1 && g == a.2).unwrap();
        let at = read_all(&mut ssd, &mut EventQueue::new(), &[a.0, b.0, c.0]);
        assert_eq!(at[0], command + tr + xfer + link, "A: one sense");
        assert_eq!(at[2], command + tr + 2 * xfer + link, "C: in A's sense, transferred after A");
        assert_eq!(at[1], command + 2 * tr + xfer + link, "B: after A's sense");
    }

    /// With one plane per die no read has a partner, so multi-plane reads change nothing: a
    /// random batch completes at the same instants with the option on as off.
    #[test]
    fn multi_plane_reads_on_one_plane_change_nothing() {
        let mut rng = 12345u64;
        let lpns: Vec<u32> = (0..500)
            .map(|_| {
                rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                ((rng >> 33) % (1 << 18)) as u32
            })
            .collect();
        let times = |multi| read_all(&mut filled(1, multi), &mut EventQueue::new(), &lpns);
        assert_eq!(times(true), times(false));
    }

    /// Host data goes to the die free soonest; ties go to the first die in round-robin order
    /// from the cursor, wrapping past the last die; dies whose queues reach past the horizon
    /// take nothing, and then the first time one frees is returned.
    #[test]
    fn pick_die_takes_the_soonest_free_die_round_robin_from_the_cursor() {
        let mut ssd = Ssd::new(SsdConfig::generic(1), 1).unwrap();
        let dies = ssd.dies.len() as u32;
        assert!(dies > 4);
        // All idle: the cursor's die.
        ssd.die_cursor = 3;
        assert_eq!(ssd.pick_die(0, 1000, false), Ok(3));
        // Dies from the cursor on are committed for longer: the soonest is before the cursor,
        // and of the two tied there the first after wrapping (0).
        ssd.die_committed.fill(500);
        ssd.die_committed[0] = 100;
        ssd.die_committed[1] = 100;
        ssd.die_cursor = 2;
        assert_eq!(ssd.pick_die(0, 1000, false), Ok(0));
        ssd.die_committed[0] = 200;
        assert_eq!(ssd.pick_die(0, 1000, false), Ok(1));
        // The last die is the cursor's, the others tie with it: the cursor's.
        ssd.die_committed.fill(100);
        ssd.die_cursor = dies - 1;
        assert_eq!(ssd.pick_die(0, 1000, false), Ok(dies - 1));
        // Every queue reaches past the horizon: none, and when the first frees.
        ssd.die_committed[4] = 50;
        assert_eq!(ssd.pick_die(0, 20, false), Err(Some(50)));
    }

    proptest::proptest! {
        /// The early stop of a dispatch pass asks only whether the search for the soonest die
        /// would find one: whatever the dies' queues, commitments, which dies take host data,
        /// the cursor and the horizon, the first ready die is found exactly when the search
        /// finds one, it is ready, and when none is both give the same error.
        #[test]
        fn a_ready_die_is_found_exactly_when_the_search_finds_one(
            busy in proptest::collection::vec(0u64..3000, 32), committed in proptest::collection::vec(0u64..3000, 32),
            stuck in proptest::collection::vec(proptest::bool::weighted(0.3), 32),
            cursor in 0u32..32, now in 0u64..1000, horizon in 0u64..4000, at_a_die in proptest::option::of((0u32..32, -1i64..=1)),
        ) {
            let mut ssd = Ssd::new(SsdConfig::generic(1), 1).unwrap();
            proptest::prop_assert_eq!(ssd.dies.len(), 32);
            for d in 0..32u32 {
                ssd.occupy_die(d, 0, busy[d as usize]);
                ssd.die_committed[d as usize] = committed[d as usize];
                ssd.ftl.set_stuck(d, stuck[d as usize]);
            }
            ssd.die_cursor = cursor;
            // Also a horizon at a die's own time, or just either side of it.
            let horizon = match at_a_die {
                Some((d, delta)) => {
                    let t = ssd.die_free_at(d, now).max(ssd.die_committed[d as usize]);
                    t.saturating_add_signed(delta)
                }
                None => horizon,
            };
            let (first, soonest) = (ssd.pick_die(now, horizon, true), ssd.pick_die(now, horizon, false));
            proptest::prop_assert_eq!(first.map(|_| ()), soonest.map(|_| ()));
            if let Ok(d) = first {
                proptest::prop_assert!(ssd.ftl.accepts_host_data(d));
                proptest::prop_assert!(ssd.die_free_at(d, now).max(ssd.die_committed[d as usize]) <= horizon);
            }
        }
    }
}
