//! An array as a block device: requests in, member I/O through each member's own block
//! queue, completions back. Each member keeps its own events, queue, clock and counters; the
//! event loop sees the array as one device whose events carry its members' events.
//!
//! A request goes through up to four stages: it waits for its stripes (their lock and stripe
//! heads in the cache), reads what the parity or a reconstruction needs, has its stripes
//! handled on a stripe thread (parity computed), and writes. Levels without parity skip
//! straight to reading or writing.
//!
//! One concern a file: `slots` (a request's stages), `admission` (row locks, stripe heads,
//! md's blocked submitters and joined writes), `members` (feeding the member queues),
//! `health` (failures and spares), `resync` (driving a rebuild), `md_bitmap` (md's
//! write-intent bitmap), `controller` (a hardware controller's path), `verify` (real
//! bytes, checked), `handler` (the engine's stripe threads and costs).

mod admission;
mod controller;
mod handler;
mod health;
mod md_bitmap;
mod members;
mod resync;
mod slots;
mod verify;

use std::collections::VecDeque;
use std::rc::Rc;

use rustc_hash::{FxHashMap, FxHashSet};

use super::bitmap::WriteIntentBitmap;
use super::config::{ArrayConfig, EngineConfig};
use super::layout::RaidLevel;
use super::data::Captured;
use super::head_pool::HeadPool;
use super::hwraid::Controller;
use super::layout::Layout;
use super::plan::{Health, MemberIo, Plan};
use super::rebuild::Rebuild;
use super::share::{HostActivity, RebuildShare, REBUILD_PROCESS};
use super::stripe_cache::StripeCache;
use crate::block::{QueuedDevice, Scheduler};
use crate::device::{BlockDevice, DeviceCtx, Drive};
use crate::engine::Time;
use crate::error::ConfigError;
use crate::io::{BioId, DeviceRequest, Op, Tag};
use crate::report::{ArrayReport, DeviceKind, DeviceReport};
use handler::Handler;
use members::Member;
use verify::Verifier;

/// The array's own events and its members'.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArrayEvent<E> {
    /// An event of member `.0`.
    Member(u16, E),
    /// Request slot `.0`'s stripes are handled: its writes can go.
    Handled(u32),
    /// A timer of member `member`'s I/O scheduler.
    Timer { member: u16, key: u16, token: u32 },
    /// The members of failure group `.0` (those failing at the same time) fail now.
    Fail(u16),
    /// The rebuild may go on (after md's sleep for running too fast).
    RebuildWake,
    /// md's sync thread wakes from its sleep after waiting for rebuild unit `.0`'s stripe
    /// heads: the unit starts, and the thread goes on.
    SyncSlept(u32),
    /// A hardware controller has taken request slot `.0` (into its cache, or from it).
    Accepted(u32),
    /// A hardware controller has processed planned slot `.0`'s commands: it starts.
    Launch(u32),
}

/// How a request holds the rows it works on (see `Array::row_lock`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum RowLock {
    Read,
    Write,
    Rebuild,
}

/// `locked_rows`' mark of a row a write holds.
const ROW_WRITTEN: u32 = u32::MAX;

/// The `upper` of a slot that is none of the host's requests (the array's own I/O).
const NO_UPPER: Tag = Tag::MAX;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
enum Stage {
    #[default]
    Free,
    Waiting,
    /// Admitted, held until md's next bitmap update is on the members.
    Bitmap,
    /// md: an admitted rebuild unit whose sync thread sleeps a jiffy after waiting for it.
    SyncSleep,
    /// md: a write taken along by an earlier one of its process (see `Array::join_writes`);
    /// it completes with that one.
    Joined,
    Reading,
    Handling,
    Writing,
}

/// A request in the array: the host's (`upper`), or one of the array's own. What a
/// completion looks at comes first, in the slot's first cache line.
#[derive(Clone, Debug, Default)]
#[repr(C, align(64))]
struct Slot {
    upper: Tag,
    /// Member I/O of the current stage still under way.
    pending: u32,
    /// The process whose I/O it is (member schedulers queue per process).
    process: u32,
    /// The host's request was background writeback (not REQ_SYNC): its member I/O is too,
    /// as md's cloned bios keep their flags.
    background: bool,
    stage: Stage,
    op: Option<Op>,
    len: u64,
    handling_ns: Time,
    /// A rebuild unit: its rows stay locked until the rebuild's synced part passes them.
    rebuild: bool,
    /// A hardware controller's destage of cached writes, and the dirty bytes it writes
    /// (`offset`, `len` are what it updates: more, if it updates whole strips).
    destage: bool,
    dirty: (u64, u64),
    /// Read data still to cross a hardware controller's data path to the host.
    to_transfer: bool,
    stripe_heads: u64,
    rows: Option<(u64, u64)>,
    writes: Vec<MemberIo>,
    reads: Vec<MemberIo>,
    /// Where the request starts, and the health epoch its plan was made in.
    offset: u64,
    epoch: u64,
    /// Its plan's stripe heads (all, RMW, RCW, full), parity bytes, reconstructed and
    /// dropped bytes: counted when it is carried out.
    stats: [u64; 7],
    /// What its plan's reads returned, kept for a data-verified array's write stage.
    captured: Option<Captured>,
    /// Under way when a member failed: a rebuild waits for it.
    before_failure: bool,
    /// The bitmap chunks a write holds (from its bitmap check until it is done).
    bitmap_chunks: Option<(u32, u32)>,
    /// md's bitmap update: its page writes.
    bitmap_update: bool,
    /// md: the stripe heads it needs that are whole in the stripe cache, ascending; their
    /// pages are not read (kept in its plan for a data-verified array's parity).
    cached_heads: Vec<u64>,
    /// md: the later writes it took along (`Stage::Joined` slots), completed with it.
    joined: Vec<u32>,
}

pub struct Array<D> {
    layout: Layout,
    handler: Handler,
    /// Every device: the members, then the spares.
    members: Vec<Member<D>>,
    /// The device playing each role of the layout (a spare takes over a failed member's).
    roles: Vec<u16>,
    /// Spares not yet used.
    spares: VecDeque<u16>,
    health: Health,
    failures: Vec<(u16, Time)>,
    /// Roles failing together, one group per time (`ArrayEvent::Fail` names the group).
    failure_groups: Vec<Vec<u16>>,
    /// Failures scheduled and still to come (a run until the rebuilds are done waits for them).
    failures_pending: u32,
    /// A failure that would have lost the array's data (it was not applied; the run ends
    /// with this as its error), and when the run began (for its time).
    data_lost: Option<String>,
    run_start: Time,
    rebuild: Option<Rebuild>,
    /// A failure with a spare for it came during the pass: it issues no more units, and a
    /// new pass over every replacement starts once those under way are done.
    rebuild_interrupted: bool,
    rebuild_limit: Option<u64>,
    rebuild_stopped: bool,
    /// Roles without current data waiting for a spare and a rebuild, oldest first.
    degraded_roles: VecDeque<u16>,
    /// Changes whenever members' health does: a plan made before is re-made.
    health_epoch: u64,
    /// Requests under way since before the last failure.
    barrier: u32,
    /// Bytes of host requests the array has taken (md's idle detection looks at it).
    host_submitted: u64,
    /// The host's requests in the array (a streaming engine's arbitration at each member
    /// looks at it).
    host_activity: Rc<HostActivity>,
    /// A hardware RAID controller's command path and write-back cache.
    controller: Option<Controller>,
    /// Real bytes on the members, checked on every read (`verify_data`).
    verify: Option<Box<Verifier>>,
    slots: Vec<Slot>,
    free: Vec<u32>,
    waiting: VecDeque<u32>,
    /// Processes with a request in `waiting` (when submitters block), each with the requests
    /// it submitted after it, in order.
    blocked: FxHashMap<u32, VecDeque<u32>>,
    /// Rows in work for the host: how many reads share each, or `ROW_WRITTEN` for a write.
    locked_rows: FxHashMap<u64, u32>,
    /// Rows a rebuild unit holds until the synced part passes them. Host reads share them
    /// (both only read the survivors); host writes wait.
    rebuild_rows: FxHashSet<u64>,
    /// Scratch for `admit_waiting`: the rows of the writes still waiting.
    rows_wanted: Vec<(u64, u64)>,
    /// md's stripe heads in work (unbounded for other engines).
    heads: HeadPool,
    plan: Plan,
    /// Member completions reported and not yet handled, and scratch for the bios of one.
    done: Vec<(u16, Tag)>,
    bios_buf: Vec<BioId>,
    report: ArrayReport,
    host_bytes: [u64; 2],
    /// md's write-intent bitmap, where its pages start on each member, the writes held for
    /// an update (with the update each waits for), and the stripes raid5d could not handle
    /// while it waited for an update's writes.
    bitmap: Option<WriteIntentBitmap>,
    bitmap_base: u64,
    bitmap_held: VecDeque<(u32, u64)>,
    raid5d_waits: bool,
    handling_held: Vec<u32>,
    /// md's stripe cache's contents (RAID 5/6), and scratch for a request's stripe heads.
    stripe_cache: Option<StripeCache>,
    heads_scratch: Vec<u64>,
}

/// The process md's own threads (raid5d) issue I/O as.
const MD_THREAD_PROCESS: u32 = u32::MAX - 1;

/// Depth the host's queue in front of an md or streaming array allows: they take bios as they
/// come (a hardware controller has its own, `HwRaidConfig::queue_depth`).
const ARRAY_QUEUE_DEPTH: u32 = 1 << 20;

impl<D: Drive> Array<D> {
    /// An array over `devices`, built from `cfg.members` in order; `hz` is the host's tick
    /// rate (for the members' diskstats).
    pub fn new(cfg: &ArrayConfig, devices: Vec<D>, hz: u32) -> Result<Array<D>, ConfigError> {
        cfg.validate()?;
        assert_eq!(devices.len(), cfg.members.len() + cfg.spares.len(), "one device per member and spare");
        let layout = Layout::new(cfg.level, cfg.members.len() as u32, cfg.chunk_bytes, cfg.member_bytes());
        let handler = Handler::new(&cfg.engine, cfg.chunk_bytes);
        let n = cfg.members.len();
        let host_activity = Rc::new(HostActivity::default());
        let members: Vec<Member<D>> = cfg
            .members
            .iter()
            .chain(&cfg.spares)
            .zip(devices)
            .map(|(spec, device)| {
                let (sched, depth) = match &cfg.engine {
                    // The engine's own arbitration between host and rebuild I/O.
                    EngineConfig::Streaming(s) => {
                        (Scheduler::Custom(Box::new(RebuildShare::new(s.rebuild_share, s.rebuild_depth_beside_host, s.host_idle_after_ns, host_activity.clone()))), device.queue_depth())
                    }
                    EngineConfig::Md(_) => (spec.scheduler.build(hz, device.rotational()), device.queue_depth()),
                    EngineConfig::Hwraid(h) => {
                        (spec.scheduler.build(hz, device.rotational()), device.queue_depth().min(h.member_queue_depth))
                    }
                };
                Member { name: spec.name.clone(), dev: QueuedDevice::new(device, depth, hz, sched, spec.queue) }
            })
            .collect();
        let index = |name: &str| cfg.members.iter().position(|m| m.name == name).expect("validated") as u16;
        let failures = cfg.failures.iter().map(|f| (index(&f.member), f.at_ns)).collect();
        let report = ArrayReport {
            level: cfg.level.label(),
            engine: cfg.engine.label(),
            chunk_bytes: cfg.chunk_bytes,
            members: members.len() as u32,
            handler_threads: handler.threads.len() as u32,
            bitmap_chunk_bytes: cfg.bitmap_chunk().unwrap_or(0),
            ..Default::default()
        };
        let member_bytes = layout.rows * layout.chunk;
        let bitmap = match (&cfg.engine, cfg.bitmap_chunk()) {
            (EngineConfig::Md(md), Some(chunk)) => {
                Some(WriteIntentBitmap::new(member_bytes, chunk, md.bitmap_daemon_sleep_ns))
            }
            _ => None,
        };
        let heads = HeadPool::new(handler.cache_size, handler.cache_limit);
        Ok(Array {
            layout,
            handler,
            health: Health::all_in_sync(n),
            roles: (0..n as u16).collect(),
            spares: (n as u16..members.len() as u16).collect(),
            members,
            failures,
            failure_groups: Vec::new(),
            failures_pending: 0,
            data_lost: None,
            run_start: 0,
            rebuild: None,
            rebuild_interrupted: false,
            rebuild_limit: cfg.rebuild_limit_bytes,
            rebuild_stopped: false,
            degraded_roles: VecDeque::new(),
            health_epoch: 0,
            barrier: 0,
            host_submitted: 0,
            host_activity,
            controller: match &cfg.engine {
                EngineConfig::Hwraid(h) => Some(Controller::new(h.clone())),
                _ => None,
            },
            verify: cfg.verify_data.then(|| Box::new(Verifier::new(layout))),
            slots: Vec::new(),
            free: Vec::new(),
            waiting: VecDeque::new(),
            blocked: FxHashMap::default(),
            locked_rows: FxHashMap::default(),
            rebuild_rows: FxHashSet::default(),
            rows_wanted: Vec::new(),
            heads,
            plan: Plan::default(),
            done: Vec::new(),
            bios_buf: Vec::new(),
            report,
            host_bytes: [0; 2],
            bitmap,
            bitmap_base: member_bytes,
            bitmap_held: VecDeque::new(),
            raid5d_waits: false,
            handling_held: Vec::new(),
            stripe_cache: match &cfg.engine {
                EngineConfig::Md(md) if cfg.level.parity_count() > 0 => Some(StripeCache::new(md.stripe_cache_size as usize)),
                _ => None,
            },
            heads_scratch: Vec::new(),
        })
    }

    /// The same array with its member devices transformed (to run a system of one kind of
    /// drive without dispatch between kinds).
    pub fn map_members<E>(self, f: impl Fn(D) -> E) -> Array<E> {
        Array {
            layout: self.layout,
            handler: self.handler,
            members: self
                .members
                .into_iter()
                .map(|m| Member { name: m.name, dev: m.dev.map_device(&f) })
                .collect(),
            roles: self.roles,
            spares: self.spares,
            health: self.health,
            failures: self.failures,
            failure_groups: self.failure_groups,
            failures_pending: self.failures_pending,
            data_lost: self.data_lost,
            run_start: self.run_start,
            rebuild: self.rebuild,
            rebuild_interrupted: self.rebuild_interrupted,
            rebuild_limit: self.rebuild_limit,
            rebuild_stopped: self.rebuild_stopped,
            degraded_roles: self.degraded_roles,
            health_epoch: self.health_epoch,
            barrier: self.barrier,
            host_submitted: self.host_submitted,
            host_activity: self.host_activity,
            controller: self.controller,
            verify: self.verify,
            slots: self.slots,
            free: self.free,
            waiting: self.waiting,
            blocked: self.blocked,
            locked_rows: self.locked_rows,
            rebuild_rows: self.rebuild_rows,
            rows_wanted: self.rows_wanted,
            heads: self.heads,
            plan: self.plan,
            done: self.done,
            bios_buf: self.bios_buf,
            report: self.report,
            host_bytes: self.host_bytes,
            bitmap: self.bitmap,
            bitmap_base: self.bitmap_base,
            bitmap_held: self.bitmap_held,
            raid5d_waits: self.raid5d_waits,
            handling_held: self.handling_held,
            stripe_cache: self.stripe_cache,
            heads_scratch: self.heads_scratch,
        }
    }

    pub fn level(&self) -> RaidLevel {
        self.layout.level
    }

    pub fn members(&self) -> impl Iterator<Item = &D> {
        self.members.iter().map(|m| &m.dev.device)
    }

    /// Its members (spares included) by name.
    pub fn members_named(&self) -> impl Iterator<Item = (&str, &D)> {
        self.members.iter().map(|m| (m.name.as_str(), &m.dev.device))
    }

    pub fn members_named_mut(&mut self) -> impl Iterator<Item = (&str, &mut D)> {
        self.members.iter_mut().map(|m| (m.name.as_str(), &mut m.dev.device))
    }

    fn report(&self, at: Time) -> DeviceReport {
        let mut member_read = 0;
        let mut member_written = 0;
        for m in &self.members {
            let d = m.dev.queue.disk().snapshot(at);
            member_read += d.read_sectors * 512;
            member_written += d.write_sectors * 512;
        }
        let mut array = self.report.clone();
        array.handler_busy_ns = self.handler.threads.busy_by(at);
        for report in self.rebuild.iter().flat_map(|rb| rb.reports()) {
            if let Some(earlier) = array.rebuild.replace(report.clone()) {
                array.earlier_rebuilds.push(earlier);
            }
        }
        if let Some(v) = &self.verify {
            array.verified_bytes = v.checked_bytes;
            array.data_errors = v.errors;
            array.first_data_error = v.first_error.clone();
        }
        if let Some(b) = &self.bitmap {
            array.bitmap_bits_set = b.stats.bits_set;
            array.bitmap_updates = b.stats.updates;
        }
        if let Some(c) = &self.controller {
            array.cache_read_hits = c.read_hits;
            array.cache_write_waits = c.write_waits;
            array.destaged_bytes = c.destaged_bytes;
            array.cache_dirty_bytes = c.dirty_bytes();
            array.controller_busy_ns = c.busy_ns(at);
        }
        DeviceReport {
            kind: DeviceKind::Array,
            host_bytes_written: self.host_bytes[1],
            host_bytes_read: self.host_bytes[0],
            media_bytes_written: member_written,
            media_bytes_read: member_read,
            die_busy_ns: 0,
            dies: 0,
            channel_busy_ns: Vec::new(),
            controller_busy_ns: array.handler_busy_ns,
            controller_cores: array.handler_threads,
            thermal: None,
            nand: None,
            array: Some(array),
            hdd: None,
            remap: None,
        }
    }
}

impl<D: Drive> BlockDevice for Array<D> {
    type Event = ArrayEvent<D::Event>;

    fn lay_out(&mut self, runs: &[(u64, u64)]) {
        if runs.is_empty() {
            return;
        }
        for (role, member_runs) in self.layout.member_runs(runs).into_iter().enumerate() {
            let dev = self.roles[role] as usize;
            self.members[dev].dev.device.lay_out(&member_runs);
        }
    }

    fn capacity(&self) -> u64 {
        self.layout.capacity()
    }

    fn queue_depth(&self) -> u32 {
        self.controller.as_ref().map_or(ARRAY_QUEUE_DEPTH, Controller::queue_depth)
    }

    fn submit(&mut self, req: DeviceRequest, ctx: &mut impl DeviceCtx<Self::Event>) {
        let s = self.alloc();
        let slot = &mut self.slots[s as usize];
        slot.upper = req.tag;
        slot.process = req.process;
        slot.background = !req.sync;
        slot.op = Some(req.op);
        slot.len = req.len;
        self.host_submitted += req.len;
        self.host_activity.arrive();
        if self.controller.is_some() {
            self.controller_submit(s, req, ctx);
        } else {
            self.start(s, req.op, req.offset, req.len, ctx);
        }
        self.drain(ctx);
    }

    #[inline(always)]
    fn handle(&mut self, event: Self::Event, ctx: &mut impl DeviceCtx<Self::Event>) {
        match event {
            ArrayEvent::Member(m, e) => self.member_event(m, e, ctx),
            ArrayEvent::Handled(s) => {
                debug_assert_eq!(self.slots[s as usize].stage, Stage::Handling);
                self.write(s, ctx);
            }
            ArrayEvent::Timer { member, key, token } => self.member_timer(member, key, token, ctx),
            ArrayEvent::Fail(group) => {
                self.failures_pending -= 1;
                self.fail_group(group as usize, ctx);
            }
            ArrayEvent::RebuildWake => self.pump_rebuild(ctx),
            ArrayEvent::SyncSlept(s) => {
                debug_assert_eq!(self.slots[s as usize].stage, Stage::SyncSleep);
                // A member may have failed while the thread slept.
                self.refresh_holding(s);
                self.read(s, true, ctx);
                self.wake(REBUILD_PROCESS, ctx);
                self.pump_rebuild(ctx);
            }
            ArrayEvent::Accepted(s) => self.finish(s, ctx),
            ArrayEvent::Launch(s) => self.launch(s, true, ctx),
        }
        self.drain(ctx);
    }

    fn internal_report(&self, at: Time) -> DeviceReport {
        self.report(at)
    }

    fn end_run(&mut self, now: Time) {
        // A rebuild issues no more units; those under way finish.
        self.rebuild_stopped = true;
        for m in &mut self.members {
            m.dev.device.end_run(now);
        }
    }

    fn has_internal_work(&self) -> bool {
        self.slots.iter().any(|s| s.stage != Stage::Free)
            || self.controller.as_ref().is_some_and(|c| c.pending())
            || self.members.iter().any(|m| m.dev.device.has_internal_work())
    }

    /// md acknowledges a write once its members have it, so it holds nothing of its own; a
    /// hardware controller's write-back cache is taken as battery-backed, as sold for
    /// write-back use. The members answer for their own caches.
    fn volatile(&self) -> crate::device::Volatile {
        crate::device::Volatile::default()
    }

    fn member_volatile(&self) -> Vec<(String, crate::device::Volatile)> {
        self.members.iter().map(|m| (m.name.clone(), m.dev.device.volatile())).collect()
    }

    /// Nothing of its own. Its members' losses are placed in the array for RAID 0 under md;
    /// with mirrors or parity which copy survives is md's resync's choice, and a hardware
    /// controller's own cache stands between, so such an array whose members lost data
    /// cannot say where.
    fn lost_ranges(&self) -> Option<Vec<crate::device::LostRange>> {
        use crate::device::LostRange;
        let mut out = Vec::new();
        for (role, &m) in self.roles.iter().enumerate() {
            let lost = self.members[m as usize].dev.device.lost_ranges()?;
            if lost.is_empty() {
                continue;
            }
            if self.layout.level != RaidLevel::Raid0 || self.controller.is_some() {
                return None;
            }
            for x in lost {
                let runs = self.layout.raid0_array_runs(role as u32, x.offset, x.len);
                out.extend(runs.into_iter().map(|(offset, len)| LostRange { offset, len, promised: x.promised }));
            }
        }
        Some(crate::device::merge_lost(out))
    }

    fn begin_run(&mut self) -> Time {
        debug_assert!(self.slots.iter().all(|s| s.stage == Stage::Free), "a request outlived its run");
        self.members.iter_mut().map(|m| m.dev.device.begin_run()).max().unwrap_or(0)
    }
}
