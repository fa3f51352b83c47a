//! An array as a block device: requests in, member I/O through each member's own block
//! queue, completions back. Each member keeps its own events, queue, clock and counters; the
//! event loop sees the array as one device whose events carry its members' events.
//!
//! A request goes through up to four stages: it waits for its stripes (their lock and stripe
//! heads in the cache), reads what the parity or a reconstruction needs, has its stripes
//! handled on a stripe thread (parity computed), and writes. Levels without parity skip
//! straight to reading or writing.

use std::collections::VecDeque;
use std::rc::Rc;

use rustc_hash::{FxHashMap, FxHashSet};

use super::bitmap::{WriteIntentBitmap, BITMAP_PAGE};
use super::config::{ArrayConfig, EngineConfig, RaidLevel, PAGE};
use super::layout::Layout;
use super::plan::{plan, plan_rebuild, Health, MemberIo, Plan};
use super::rebuild::{MdThrottle, Next, Rebuild};
use crate::report::{ArrayReport, RebuildReport};
use super::data::{Captured, DataArray};
use super::hwraid::{strip_destage, Controller, RmwUnit};
use super::share::{HostActivity, RebuildShare, REBUILD_PROCESS};
use super::stripe_cache::{request_heads, row_heads, skip_cached_pages, StripeCache};
use crate::block::{BlockQueue, Scheduler};
use crate::io::BioId;
use crate::device::{BlockDevice, DeviceCtx, Drive};
use crate::report::{DeviceKind, DeviceReport};
use crate::io::{DeviceRequest, Op, Tag};
use crate::engine::{MultiServer, Time};
use crate::error::ConfigError;
use crate::report::DeviceResult;

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
    /// A hardware controller has taken request slot `.0` (into its cache, or from it).
    Accepted(u32),
    /// A hardware controller has processed planned slot `.0`'s commands: it starts.
    Launch(u32),
}

const NO_UPPER: Tag = Tag::MAX;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
enum Stage {
    #[default]
    Free,
    Waiting,
    /// Admitted, held until md's next bitmap update is on the members.
    Bitmap,
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

/// A data-verified array's bytes: the members' ([`DataArray`]) and what the host wrote
/// (`image`). Writes take effect when their member writes are issued, reads are checked when
/// their member reads are; rows in work are locked, so nothing changes in between.
pub struct Verifier {
    data: DataArray,
    image: Vec<u8>,
    rng: u64,
    checked_bytes: u64,
    errors: u64,
    first_error: Option<String>,
}

impl Verifier {
    fn new(layout: Layout) -> Verifier {
        Verifier {
            data: DataArray::new(layout),
            image: vec![0; layout.capacity() as usize],
            rng: 0x9E37_79B9_7F4A_7C15,
            checked_bytes: 0,
            errors: 0,
            first_error: None,
        }
    }

    fn error(&mut self, what: String) {
        self.errors += 1;
        self.first_error.get_or_insert(what);
    }

    fn bytes(&mut self, len: u64) -> Vec<u8> {
        (0..len)
            .map(|_| {
                self.rng ^= self.rng << 13;
                self.rng ^= self.rng >> 7;
                self.rng ^= self.rng << 17;
                self.rng as u8
            })
            .collect()
    }
}

struct Member<D> {
    name: String,
    device: D,
    queue: BlockQueue,
}

/// How an engine handles stripes and rebuilds: its threads, costs and limits.
struct Handler {
    threads: MultiServer,
    stripe_head_ns: Time,
    request_ns: Time,
    parity_bytes_per_s: f64,
    /// Stripe heads that may be in work at once (md's stripe cache; unbounded otherwise).
    cache_size: u64,
    /// Bytes of a member in one rebuild unit (at least a row), and units in flight.
    rebuild_unit: u64,
    rebuild_depth: usize,
    throttle: Option<MdThrottle>,
    /// md: a degraded array's reads all go through the stripe cache (Linux 4.1, commit
    /// 9ffc8f7), not only those of a lost member's chunks.
    cached_degraded_reads: bool,
    /// md: a request that must wait for stripe heads or a locked stripe blocks the process
    /// submitting it (it sleeps in `raid5_get_active_stripe`), so that process's later
    /// requests wait behind it instead of queueing for stripes themselves; and a RAID 5/6
    /// write that can take its stripes takes along the writes queued so behind it that
    /// continue it (`Array::join_writes`).
    submitter_blocks: bool,
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

/// md's resync window: it checks its speed after every 32 pages of resync I/O (md.c).
const MD_SYNC_WINDOW: u64 = 32 * PAGE;

impl Handler {
    fn new(engine: &EngineConfig, chunk: u64) -> Handler {
        match engine {
            EngineConfig::Md(md) => {
                // Whole rows, so that a unit's rows are its own.
                let unit = MD_SYNC_WINDOW.div_ceil(chunk).max(1) * chunk;
                Handler {
                    threads: MultiServer::new(1 + md.group_thread_cnt as usize),
                    stripe_head_ns: md.stripe_head_ns,
                    request_ns: 0,
                    parity_bytes_per_s: md.parity_bytes_per_s,
                    cache_size: md.stripe_cache_size as u64,
                    rebuild_unit: unit,
                    // A rebuild takes stripe heads from the same cache as host writes.
                    rebuild_depth: (md.stripe_cache_size as u64 * PAGE / unit).max(1) as usize,
                    throttle: Some(MdThrottle {
                        min_bytes_per_s: md.sync_speed_min_bytes_per_s,
                        max_bytes_per_s: md.sync_speed_max_bytes_per_s,
                    }),
                    cached_degraded_reads: true,
                    submitter_blocks: true,
                }
            }
            EngineConfig::Hwraid(h) => Handler {
                // The controller's parity engine; commands and data have their own servers.
                threads: MultiServer::new(1),
                stripe_head_ns: 0,
                request_ns: 0,
                parity_bytes_per_s: h.parity_bytes_per_s,
                cache_size: u64::MAX,
                rebuild_unit: MD_SYNC_WINDOW.div_ceil(chunk).max(1) * chunk,
                rebuild_depth: 4,
                throttle: None,
                cached_degraded_reads: false,
                submitter_blocks: false,
            },
            EngineConfig::Streaming(s) => Handler {
                threads: MultiServer::new(s.cores as usize),
                stripe_head_ns: 0,
                request_ns: s.request_ns,
                parity_bytes_per_s: s.parity_bytes_per_s,
                cache_size: u64::MAX,
                rebuild_unit: s.rebuild_unit_bytes.div_ceil(chunk).max(1) * chunk,
                rebuild_depth: s.rebuild_depth as usize,
                throttle: None,
                cached_degraded_reads: false,
                submitter_blocks: false,
            },
        }
    }

    /// Thread time to handle a plan's stripes.
    fn cost(&self, plan: &Plan) -> Time {
        self.request_ns
            + plan.stripe_heads * self.stripe_head_ns
            + (plan.parity_bytes as f64 * 1e9 / self.parity_bytes_per_s) as Time
    }
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
    stripe_heads_in_use: u64,
    plan: Plan,
    /// Member completions reported and not yet handled.
    done: Vec<(u16, Tag)>,
    hosts: Vec<BioId>,
    armed: Vec<crate::block::iosched::ArmedTimer>,
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

/// A member's context: its events travel as the array's, its completions are collected.
struct MemberCtx<'a, C> {
    ctx: &'a mut C,
    member: u16,
    done: &'a mut Vec<(u16, Tag)>,
}

impl<E, C: DeviceCtx<ArrayEvent<E>>> DeviceCtx<E> for MemberCtx<'_, C> {
    #[inline]
    fn now(&self) -> Time {
        self.ctx.now()
    }
    #[inline(always)]
    fn schedule(&mut self, at: Time, event: E) {
        self.ctx.schedule(at, ArrayEvent::Member(self.member, event));
    }
    #[inline(always)]
    fn complete(&mut self, tag: Tag) {
        self.done.push((self.member, tag));
    }
}

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
                Member { name: spec.name.clone(), queue: BlockQueue::with_limits(depth, hz, sched, spec.queue), device }
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
            stripe_heads_in_use: 0,
            plan: Plan::default(),
            done: Vec::new(),
            hosts: Vec::new(),
            armed: Vec::new(),
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
                .map(|m| Member { name: m.name, device: f(m.device), queue: m.queue })
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
            stripe_heads_in_use: self.stripe_heads_in_use,
            plan: self.plan,
            done: self.done,
            hosts: self.hosts,
            armed: self.armed,
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
        self.members.iter().map(|m| &m.device)
    }

    fn alloc(&mut self) -> u32 {
        match self.free.pop() {
            Some(s) => {
                self.slots[s as usize].process = 0;
                s
            }
            None => {
                self.slots.push(Slot::default());
                (self.slots.len() - 1) as u32
            }
        }
    }

    /// The member in role `role` fails, unless that loses the array's data: then the run is
    /// to end with that as its error (see [`BlockDevice::data_lost`]), and the member stays.
    fn fail_or_lose(&mut self, role: u16, ctx: &mut impl DeviceCtx<ArrayEvent<D::Event>>) {
        if self.data_lost.is_some() {
            return;
        }
        let member_bytes = self.layout.rows * self.layout.chunk;
        let out = |m: u32| m == role as u32 || self.health.in_sync_below(m) < member_bytes;
        let n = self.roles.len();
        if !self.level().loses_data(n, out) {
            self.fail(role);
            return;
        }
        let name = |r: usize| self.members[self.roles[r] as usize].name.as_str();
        // A role out of the array is either failed, or held by a replacement not yet rebuilt:
        // name the member it replaces too, as that is the one the user failed.
        let describe = |r: usize| {
            let replaces = self.rebuild.as_ref().and_then(|rb| {
                rb.roles().zip(rb.reports()).find(|&(t, _)| t == r as u32).map(|(_, rep)| rep.replaces.as_str())
            });
            match replaces {
                Some(old) if self.health.present(r as u32) => format!("{} (rebuilding in place of {old})", name(r)),
                _ => format!("{} (failed)", name(r)),
            }
        };
        let others: Vec<String> = (0..n).filter(|&m| m != role as usize && out(m as u32)).map(describe).collect();
        self.data_lost = Some(format!(
            "{} fails {:.3} s into the run while {} {} out of the array, and {} does not survive that: the array's data is lost",
            name(role as usize),
            (ctx.now() - self.run_start) as f64 / 1e9,
            others.join(", "),
            if others.len() == 1 { "is" } else { "are" },
            self.level().label(),
        ));
    }

    /// The member in role `role` fails: from now on nothing is read from or written to
    /// it. A free spare takes the role over and is rebuilt once every member failing at the
    /// same time has failed (`fail_group`).
    fn fail(&mut self, role: u16) {
        let failed = self.roles[role as usize];
        self.health.fail(role as u32);
        self.health_epoch += 1;
        if let Some(v) = self.verify.as_mut() {
            v.data.fail(role as u32, 0xDEAD_BEEF ^ role as u64);
        }
        self.report.failed.push(self.members[failed as usize].name.clone());
        // Like md's resync barrier: the rebuild waits for the requests already under way,
        // planned for the old health, to finish.
        for slot in &mut self.slots {
            if matches!(slot.stage, Stage::Bitmap | Stage::Reading | Stage::Handling | Stage::Writing) && !slot.before_failure {
                slot.before_failure = true;
                self.barrier += 1;
            }
        }
        self.degraded_roles.push_back(role);
    }

    /// The members of failure group `g` fail, then their spares' rebuild starts: members that
    /// fail at the same time are rebuilt in one pass from the start.
    fn fail_group(&mut self, g: usize, ctx: &mut impl DeviceCtx<ArrayEvent<D::Event>>) {
        for role in std::mem::take(&mut self.failure_groups[g]) {
            self.fail_or_lose(role, ctx);
        }
        self.start_next_rebuild(ctx);
    }

    /// Put free spares in the degraded roles' places and rebuild them all in one pass, as md
    /// recovers every spare at once. A pass under way is interrupted instead (md's
    /// `MD_RECOVERY_INTR` on a failure): once its units under way and the requests the
    /// failure caught are done, a new pass starts over its replacements and the new ones, each
    /// keeping the part already in sync.
    fn start_next_rebuild(&mut self, ctx: &mut impl DeviceCtx<ArrayEvent<D::Event>>) {
        if self.rebuild_stopped || self.spares.is_empty() || self.degraded_roles.is_empty() {
            return;
        }
        if self.rebuild.as_ref().is_some_and(|rb| !rb.idle() || self.barrier > 0) {
            self.rebuild_interrupted = true;
            return;
        }
        self.rebuild_interrupted = false;
        // Nothing of the old pass is under way, so its front has passed every row it locked.
        debug_assert!(self.rebuild_rows.is_empty(), "rows still locked by a pass with no unit under way");
        let mut targets: Vec<(u32, RebuildReport)> = match self.rebuild.take() {
            Some(rb) => rb.into_reports().map(|(role, r)| (role, RebuildReport { restarts: r.restarts + 1, ..r })).collect(),
            None => Vec::new(),
        };
        while !self.spares.is_empty() {
            let Some(role) = self.degraded_roles.pop_front() else { break };
            let failed = self.roles[role as usize];
            let spare = self.spares.pop_front().expect("checked");
            self.roles[role as usize] = spare;
            // The replacement takes writes from now on, ahead of its rebuild too.
            self.health.attach(role as u32);
            let (name, replaces) = (self.members[spare as usize].name.clone(), self.members[failed as usize].name.clone());
            targets.push((role as u32, RebuildReport::new(name, replaces, ctx.now())));
        }
        self.health_epoch += 1;
        let member_bytes = self.layout.rows * self.layout.chunk;
        self.rebuild = Some(Rebuild::new(
            targets,
            member_bytes,
            self.handler.rebuild_unit,
            self.handler.rebuild_depth,
            self.rebuild_limit,
            self.handler.throttle,
            ctx.now(),
        ));
        self.pump_rebuild(ctx);
    }

    /// Start rebuild units while the rebuild allows.
    fn pump_rebuild(&mut self, ctx: &mut impl DeviceCtx<ArrayEvent<D::Event>>) {
        loop {
            let Some(rb) = self.rebuild.as_mut() else { return };
            if self.rebuild_stopped || self.barrier > 0 {
                return;
            }
            if self.rebuild_interrupted {
                if rb.idle() {
                    self.start_next_rebuild(ctx);
                }
                return;
            }
            match rb.next(ctx.now(), self.host_submitted) {
                Next::Issue(start, len) => {
                    let s = self.alloc();
                    let slot = &mut self.slots[s as usize];
                    slot.upper = NO_UPPER;
                    slot.op = Some(Op::Write);
                    slot.len = len;
                    slot.rebuild = true;
                    self.prepare(s, Op::Write, start, len);
                    // In turn with host requests waiting for stripes.
                    if self.is_blocked(s) || !self.take_stripes(s) {
                        self.wait(s);
                        continue;
                    }
                    self.read(s, true, ctx);
                }
                Next::SleepUntil(t) => {
                    ctx.schedule(t, ArrayEvent::RebuildWake);
                    return;
                }
                Next::Wait | Next::Done => return,
            }
        }
    }

    /// A hardware controller takes a host request: writes (and flushes) complete once in its
    /// battery-backed cache, reads of cached data come from it, other reads and discards go
    /// to the members behind its command and data path.
    fn controller_submit(&mut self, s: u32, req: DeviceRequest, ctx: &mut impl DeviceCtx<ArrayEvent<D::Event>>) {
        let now = ctx.now();
        let c = self.controller.as_mut().expect("a controller");
        match req.op {
            Op::Write => {
                if !c.waiting.is_empty() || !c.has_room(req.len) {
                    c.write_waits += 1;
                    c.waiting.push_back((s, req.offset, req.len));
                    self.slots[s as usize].stage = Stage::Waiting;
                    return;
                }
                c.add(req.offset, req.len);
                let at = c.accept(now, req.len);
                self.slots[s as usize].stage = Stage::Handling;
                ctx.schedule(at, ArrayEvent::Accepted(s));
                self.pump_destage(ctx);
            }
            Op::Read if c.holds(req.offset, req.len) => {
                c.read_hits += 1;
                let at = c.accept(now, req.len);
                self.slots[s as usize].stage = Stage::Handling;
                ctx.schedule(at, ArrayEvent::Accepted(s));
            }
            Op::Flush => {
                // The cache is battery-backed: a flush has nothing to wait for.
                let at = c.command(now);
                self.slots[s as usize].stage = Stage::Handling;
                ctx.schedule(at, ArrayEvent::Accepted(s));
            }
            Op::Read | Op::Trim => {
                // The data crosses the controller once the members have read it (`finish`).
                self.slots[s as usize].to_transfer = req.op == Op::Read;
                self.prepare(s, req.op, req.offset, req.len);
                self.launch_after_controller(s, true, ctx);
            }
        }
    }

    /// Destage cached writes while the controller allows more at once.
    fn pump_destage(&mut self, ctx: &mut impl DeviceCtx<ArrayEvent<D::Event>>) {
        loop {
            let Some(c) = self.controller.as_mut() else { return };
            if c.destaging >= c.config().destage_depth {
                return;
            }
            let Some((offset, len)) = c.next_destage() else { return };
            c.destaging += 1;
            let (at, span) = match c.config().rmw_unit {
                RmwUnit::Sector => (offset, len),
                RmwUnit::Strip => strip_destage(&self.layout, offset, len, &mut Vec::new()),
            };
            let s = self.alloc();
            let slot = &mut self.slots[s as usize];
            slot.upper = NO_UPPER;
            slot.op = Some(Op::Write);
            slot.len = span;
            slot.destage = true;
            slot.dirty = (offset, len);
            self.prepare(s, Op::Write, at, span);
            self.launch_after_controller(s, false, ctx);
        }
    }

    /// A destage finished: its cache space is free for the host writes waiting.
    fn destage_done(&mut self, len: u64, ctx: &mut impl DeviceCtx<ArrayEvent<D::Event>>) {
        let now = ctx.now();
        let c = self.controller.as_mut().expect("a controller");
        c.destaged(len);
        while let Some(&(s, offset, wlen)) = c.waiting.front() {
            if !c.has_room(wlen) {
                break;
            }
            c.waiting.pop_front();
            c.add(offset, wlen);
            let at = c.accept(now, wlen);
            self.slots[s as usize].stage = Stage::Handling;
            ctx.schedule(at, ArrayEvent::Accepted(s));
        }
        self.pump_destage(ctx);
    }

    /// A rebuild unit's writes are done.
    fn rebuild_unit_done(&mut self, rows: (u64, u64), ctx: &mut impl DeviceCtx<ArrayEvent<D::Event>>) {
        let now = ctx.now();
        let rb = self.rebuild.as_mut().expect("a rebuild unit without a rebuild");
        let c = self.layout.chunk;
        let before = rb.front();
        if rb.unit_done(rows.0 * c, now) {
            // Rows below the front are current on every replacement: unlock them.
            for r in before / c..rb.front() / c {
                self.rebuild_rows.remove(&r);
            }
            let member_bytes = self.layout.rows * c;
            for role in rb.roles() {
                let synced = rb.in_sync(role);
                if synced > self.health.in_sync_below(role) {
                    self.health.set_in_sync_below(role, if synced >= member_bytes { u64::MAX } else { synced });
                }
            }
            self.health_epoch += 1;
            if !self.health.is_degraded() {
                if let Some(b) = self.bitmap.as_mut() {
                    b.array_whole(now);
                }
            }
            if !self.waiting.is_empty() {
                self.admit_waiting(ctx);
            }
        }
        if self.rebuild.as_ref().is_some_and(|r| r.finished()) {
            for (_, report) in self.rebuild.take().expect("checked").into_reports() {
                if let Some(earlier) = self.report.rebuild.replace(report) {
                    self.report.earlier_rebuilds.push(earlier);
                }
            }
            self.start_next_rebuild(ctx);
        } else {
            self.pump_rebuild(ctx);
        }
    }

    /// Plan request slot `s` and start it, or queue it behind the stripes it needs.
    fn start(&mut self, s: u32, op: Op, offset: u64, len: u64, ctx: &mut impl DeviceCtx<ArrayEvent<D::Event>>) {
        if self.read_in_one_chunk(s, op, offset, len, ctx) {
            return;
        }
        self.prepare(s, op, offset, len);
        self.launch(s, false, ctx);
    }

    /// A RAID 0 read inside one chunk (most small random reads): one member read, nothing
    /// to lock or handle. The slot goes straight to its read stage, left as planning and
    /// launching it would leave it; returns false for any other request.
    #[inline(always)]
    fn read_in_one_chunk(&mut self, s: u32, op: Op, offset: u64, len: u64, ctx: &mut impl DeviceCtx<ArrayEvent<D::Event>>) -> bool {
        let l = &self.layout;
        let (k, within) = l.chunk_of(offset);
        if op != Op::Read || l.level != RaidLevel::Raid0 || len == 0 || within + len > l.chunk || self.verify.is_some() {
            return false;
        }
        let (row, m) = l.stripe_chunk(k);
        let io = MemberIo { member: m as u16, op, offset: row * l.chunk + within, len };
        let slot = &mut self.slots[s as usize];
        debug_assert!(!slot.rebuild && !slot.destage && slot.reads.is_empty() && slot.writes.is_empty());
        slot.offset = offset;
        slot.epoch = self.health_epoch;
        slot.rows = None;
        slot.stripe_heads = 0;
        slot.handling_ns = 0;
        slot.stats = [0; 7];
        slot.stage = Stage::Reading;
        slot.pending = 1;
        self.issue(s, &io, ctx);
        true
    }

    /// Plan request slot `s` (its member I/O, stripes and handling time).
    fn prepare(&mut self, s: u32, op: Op, offset: u64, len: u64) {
        let members = &self.members;
        let roles = &self.roles;
        let load = |m: u32| {
            let q = &members[roles[m as usize] as usize].queue;
            q.in_device() + q.queued() as u32
        };
        if self.slots[s as usize].rebuild {
            let roles: Vec<u32> = self.rebuild.as_ref().expect("a rebuild unit without a rebuild").roles().collect();
            let (first, last) = (offset / self.layout.chunk, (offset + len - 1) / self.layout.chunk);
            plan_rebuild(&self.layout, &self.health, &roles, first, last, load, &mut self.plan);
        } else {
            plan(&self.layout, &self.health, op, offset, len, load, self.handler.cached_degraded_reads, &mut self.plan);
        }
        let slot = &mut self.slots[s as usize];
        slot.offset = offset;
        slot.epoch = self.health_epoch;
        self.stage(s);
        if self.slots[s as usize].destage {
            self.fill_strips(s);
        }
    }

    /// md: the stripe heads of host request `s` whose pages are all current in the stripe
    /// cache as it starts its reads (`handle_stripe` reads only pages not up to date).
    fn find_cached_heads(&mut self, s: u32) {
        let slot = &mut self.slots[s as usize];
        slot.cached_heads.clear();
        let Some(cache) = self.stripe_cache.as_ref() else { return };
        let planned_heads = slot.stats[0];
        if slot.rebuild || cache.is_empty() || slot.reads.is_empty() || planned_heads == 0 || !matches!(slot.op, Some(Op::Read | Op::Write)) {
            return;
        }
        request_heads(&self.layout, slot.offset, slot.len, &mut self.heads_scratch);
        slot.cached_heads.extend(self.heads_scratch.iter().copied().filter(|&k| cache.has(k)));
        if !slot.cached_heads.is_empty() {
            // Only heads it would read for count: a whole row it writes reads nothing anyway.
            let reads = &slot.reads;
            slot.cached_heads.retain(|&k| reads.iter().any(|io| io.offset / PAGE <= k && k < (io.offset + io.len).div_ceil(PAGE)));
        }
    }

    /// md: what a finished request leaves in the stripe cache. A rebuild unit leaves its
    /// heads whole; so does a write that read nothing or reconstructed its heads, and any
    /// head a request found whole. A read-modify-write leaves other data of the heads it read
    /// unread, and a discard drops what it touches.
    fn update_stripe_cache(&mut self, s: u32, op: Op, rebuild: bool, rows: Option<(u64, u64)>) {
        let Some(cache) = self.stripe_cache.as_mut() else { return };
        let slot = &self.slots[s as usize];
        let keys = &mut self.heads_scratch;
        if rebuild {
            let (first, last) = rows.expect("a rebuild unit locks its rows");
            row_heads(&self.layout, first, last, keys);
            cache.keep(keys);
            return;
        }
        if slot.upper == NO_UPPER || !(op == Op::Write || op == Op::Trim || !slot.cached_heads.is_empty()) {
            return;
        }
        if op == Op::Read {
            cache.keep(&slot.cached_heads);
            return;
        }
        let drop = op == Op::Trim || slot.stats[1] > 0;
        if drop && cache.is_empty() {
            return;
        }
        request_heads(&self.layout, slot.offset, slot.len, keys);
        if drop {
            // Heads found whole stay whole through a read-modify-write of other heads.
            let cached = &slot.cached_heads;
            keys.retain(|k| op == Op::Trim || cached.binary_search(k).is_err());
            cache.drop_heads(keys);
            if op == Op::Write {
                cache.keep(cached);
            }
        } else {
            cache.keep(keys);
        }
    }

    /// A destage in whole strips first reads the clean bytes of its partly dirty strips
    /// (unless its plan reads them anyway, as read-modify-write does). A member without
    /// current data there is not read (a simplification: the controller would rebuild those
    /// bytes from the rest of the row).
    fn fill_strips(&mut self, s: u32) {
        let Some(c) = self.controller.as_ref() else { return };
        if c.config().rmw_unit != RmwUnit::Strip {
            return;
        }
        let slot = &mut self.slots[s as usize];
        let (offset, len) = slot.dirty;
        let mut fills = Vec::new();
        strip_destage(&self.layout, offset, len, &mut fills);
        for f in fills {
            let read = slot.reads.iter().any(|r| r.member == f.member && r.offset <= f.offset && f.offset + f.len <= r.offset + r.len);
            if !read && self.health.ok(f.member as u32, f.offset, f.len) {
                slot.reads.push(f);
            }
        }
    }

    /// Re-plan waiting slot `s` if members' health changed since it was planned (a member
    /// failed, or a rebuild brought rows in sync).
    fn refresh(&mut self, s: u32) {
        let slot = &self.slots[s as usize];
        if slot.epoch != self.health_epoch {
            let (op, offset, len) = (slot.op.expect("a request in work"), slot.offset, slot.len);
            self.prepare(s, op, offset, len);
        }
    }

    /// Start planned slot `s`, or queue it behind the stripes it needs.
    fn launch(&mut self, s: u32, in_event: bool, ctx: &mut impl DeviceCtx<ArrayEvent<D::Event>>) {
        self.refresh(s);
        if self.is_blocked(s) {
            self.wait(s);
            return;
        }
        if !self.take_stripes(s) {
            self.wait(s);
            self.report.stripe_waits += 1;
            return;
        }
        self.read(s, in_event, ctx);
    }

    /// Slot `s`, arriving now, takes its stripes: those that need stripes queue behind any
    /// request already waiting, first come first served.
    fn take_stripes(&mut self, s: u32) -> bool {
        let slot = &self.slots[s as usize];
        let needs_stripes = slot.rows.is_some() || slot.stripe_heads > 0;
        (!needs_stripes || self.waiting.is_empty()) && self.admit(s)
    }

    /// The process whose request slot `s` is (member schedulers and md's blocking go by it).
    #[inline]
    fn process_of(&self, s: u32) -> u32 {
        let slot = &self.slots[s as usize];
        if slot.rebuild {
            REBUILD_PROCESS
        } else {
            slot.process
        }
    }

    /// The process submitting slot `s` is asleep behind an earlier request of its own.
    fn is_blocked(&self, s: u32) -> bool {
        self.handler.submitter_blocks && !self.blocked.is_empty() && self.blocked.contains_key(&self.process_of(s))
    }

    /// Slot `s` cannot start yet: it waits for its stripes, or (when submitters block)
    /// behind its process's request that does.
    fn wait(&mut self, s: u32) {
        self.slots[s as usize].stage = Stage::Waiting;
        if self.handler.submitter_blocks {
            let process = self.process_of(s);
            if let Some(behind) = self.blocked.get_mut(&process) {
                behind.push_back(s);
                return;
            }
            self.blocked.insert(process, VecDeque::new());
        }
        self.waiting.push_back(s);
    }

    /// `process`'s waiting request has started: the process wakes and submits the requests
    /// it holds, until one of them must wait in turn.
    fn wake(&mut self, process: u32, ctx: &mut impl DeviceCtx<ArrayEvent<D::Event>>) {
        if !self.handler.submitter_blocks {
            return;
        }
        loop {
            let Some(behind) = self.blocked.get_mut(&process) else { return };
            let Some(s) = behind.pop_front() else {
                self.blocked.remove(&process);
                return;
            };
            self.refresh(s);
            let joined = self.waiting.is_empty() && self.join_writes(s);
            if !self.take_stripes(s) {
                debug_assert!(!joined, "a write took along writes it could not start with");
                // Still blocked: this one now waits for its stripes.
                self.waiting.push_back(s);
                self.report.stripe_waits += 1;
                return;
            }
            self.read(s, true, ctx);
        }
    }

    /// md: host write `s`, about to take its stripes, takes along the writes its process
    /// queued behind it that continue it, as far as the stripe heads and rows of them all
    /// are free now. md adds a later write's pages to stripe heads still waiting to be
    /// handled (`add_stripe_bio`: only pages another write already claimed make the
    /// submitter wait), so sequential writes in flight together are handled together, and
    /// rows they cover whole are written without reads. md takes further stripe heads one at
    /// a time as they come free; a slot takes all of its own at once, so a write takes along
    /// only what can start with it, never making itself wait longer. The writes taken along
    /// complete with `s`, as a bio completes when the last of its stripe heads is written.
    /// Returns whether it took any.
    fn join_writes(&mut self, s: u32) -> bool {
        let slot = &self.slots[s as usize];
        if !self.handler.submitter_blocks || self.layout.level.parity_count() == 0 || slot.upper == NO_UPPER || slot.op != Some(Op::Write) {
            return false;
        }
        let Some(behind) = self.blocked.get(&slot.process) else { return false };
        if behind.is_empty() || !self.free_now(slot.stripe_heads, slot.rows, RowLock::Write) {
            return false;
        }
        let (offset, mut end) = (slot.offset, slot.offset + slot.len);
        let mut taken = 0;
        for &t in behind {
            let next = &self.slots[t as usize];
            if next.op != Some(Op::Write) || next.offset != end || next.upper == NO_UPPER {
                break;
            }
            let joined_end = end + next.len;
            plan(&self.layout, &self.health, Op::Write, offset, joined_end - offset, |_| 0, false, &mut self.plan);
            if !self.free_now(self.plan.stripe_heads, self.plan.rows, RowLock::Write) {
                break;
            }
            end = joined_end;
            taken += 1;
        }
        if taken == 0 {
            return false;
        }
        let behind = self.blocked.get_mut(&self.slots[s as usize].process).expect("checked");
        let joined: Vec<u32> = behind.drain(..taken).collect();
        for &t in &joined {
            self.slots[t as usize].stage = Stage::Joined;
        }
        let slot = &mut self.slots[s as usize];
        slot.joined.extend(joined);
        slot.len = end - offset;
        self.report.joined_writes += taken as u64;
        self.prepare(s, Op::Write, offset, end - offset);
        true
    }

    /// A write taken along by another (`join_writes`) is done with it: it was planned but
    /// never took rows or stripe heads of its own.
    fn finish_joined(&mut self, t: u32, ctx: &mut impl DeviceCtx<ArrayEvent<D::Event>>) {
        let slot = &mut self.slots[t as usize];
        debug_assert_eq!(slot.stage, Stage::Joined);
        slot.stage = Stage::Free;
        slot.op = None;
        slot.rows = None;
        slot.stripe_heads = 0;
        slot.reads.clear();
        slot.writes.clear();
        self.host_activity.leave(ctx.now());
        ctx.complete(slot.upper);
        self.free.push(t);
    }

    /// A hardware controller's processor takes time for each member command of planned slot
    /// `s` (and `host` more for the host's own): the slot starts when it has.
    fn launch_after_controller(&mut self, s: u32, host: bool, ctx: &mut impl DeviceCtx<ArrayEvent<D::Event>>) {
        let slot = &self.slots[s as usize];
        let commands = (slot.reads.len() + slot.writes.len()) as u64;
        let c = self.controller.as_mut().expect("a controller");
        let at = c.commands(ctx.now(), host, commands);
        self.slots[s as usize].stage = Stage::Waiting;
        ctx.schedule(at, ArrayEvent::Launch(s));
    }

    /// Give slot `s` the plan just made.
    fn stage(&mut self, s: u32) {
        let p = &self.plan;
        let handling_ns = if p.stripe_heads > 0 || p.parity_bytes > 0 { self.handler.cost(p) } else { 0 };
        let slot = &mut self.slots[s as usize];
        std::mem::swap(&mut slot.reads, &mut self.plan.reads);
        std::mem::swap(&mut slot.writes, &mut self.plan.writes);
        slot.rows = self.plan.rows;
        slot.stripe_heads = self.plan.stripe_heads.min(self.handler.cache_size);
        slot.handling_ns = handling_ns;
        let p = &self.plan;
        slot.stats = [p.stripe_heads, p.rmw, p.rcw, p.full, p.parity_bytes, p.reconstructed_bytes, p.discard_dropped_bytes];
    }

    /// Take slot `s`'s stripe locks and stripe heads if they are free.
    #[inline(always)]
    fn admit(&mut self, s: u32) -> bool {
        let slot = &self.slots[s as usize];
        if slot.stripe_heads == 0 && slot.rows.is_none() {
            return true;
        }
        let lock = self.row_lock(s);
        if !self.free_now(slot.stripe_heads, slot.rows, lock) {
            return false;
        }
        self.stripe_heads_in_use += slot.stripe_heads;
        if let Some((first, last)) = slot.rows {
            for r in first..=last {
                match lock {
                    RowLock::Rebuild => {
                        self.rebuild_rows.insert(r);
                    }
                    RowLock::Read => *self.locked_rows.entry(r).or_insert(0) += 1,
                    RowLock::Write => {
                        self.locked_rows.insert(r, ROW_WRITTEN);
                    }
                }
            }
        }
        true
    }

    /// Whether `heads` stripe heads and `rows`, locked as `lock`, are free now.
    fn free_now(&self, heads: u64, rows: Option<(u64, u64)>, lock: RowLock) -> bool {
        self.stripe_heads_in_use + heads <= self.handler.cache_size
            && rows.is_none_or(|(first, last)| (first..=last).all(|r| self.row_free(r, lock)))
    }

    /// How slot `s` holds its rows: reads (a degraded read reconstructing from the
    /// survivors) exclude only writes, as a rebuild unit does; a write excludes all.
    fn row_lock(&self, s: u32) -> RowLock {
        let slot = &self.slots[s as usize];
        if slot.rebuild {
            RowLock::Rebuild
        } else if slot.op == Some(Op::Read) {
            RowLock::Read
        } else {
            RowLock::Write
        }
    }

    fn row_free(&self, r: u64, lock: RowLock) -> bool {
        let host = self.locked_rows.get(&r).copied();
        match lock {
            RowLock::Read | RowLock::Rebuild => host != Some(ROW_WRITTEN),
            RowLock::Write => host.is_none() && !self.rebuild_rows.contains(&r),
        }
    }

    /// Slot `s` is done with its host rows.
    fn unlock_rows(&mut self, (first, last): (u64, u64)) {
        for r in first..=last {
            let readers = self.locked_rows.get_mut(&r).expect("a locked row");
            if *readers == ROW_WRITTEN || *readers == 1 {
                self.locked_rows.remove(&r);
            } else {
                *readers -= 1;
            }
        }
    }

    /// Issue slot `s`'s reads. `in_event`: called from an event rather than from `submit`
    /// (a request with nothing at all to do must not complete inside `submit`).
    fn read(&mut self, s: u32, in_event: bool, ctx: &mut impl DeviceCtx<ArrayEvent<D::Event>>) {
        if self.bitmap.is_some() && self.held_for_bitmap(s, ctx) {
            return;
        }
        let [heads, rmw, rcw, full, parity, rebuilt, dropped] = self.slots[s as usize].stats;
        let r = &mut self.report;
        r.stripe_heads += heads;
        r.rmw_stripe_heads += rmw;
        r.rcw_stripe_heads += rcw;
        r.full_stripe_heads += full;
        r.parity_bytes += parity;
        r.reconstructed_bytes += rebuilt;
        r.discard_dropped_bytes += dropped;
        if self.verify.is_some() {
            self.verify_read_stage(s);
        }
        self.find_cached_heads(s);
        let slot = &mut self.slots[s as usize];
        if !slot.cached_heads.is_empty() {
            self.report.stripe_cache_hits += slot.cached_heads.len() as u64;
            skip_cached_pages(&mut slot.reads, &slot.cached_heads);
        }
        if self.issue_stage::<false>(s, ctx) {
            self.handle_stripes(s, in_event, ctx);
        }
    }

    /// md's write-intent bitmap: host write `s`, admitted, sets the bits of the chunks it
    /// writes and waits for the next bitmap update (raid5's `STRIPE_BIT_DELAY`), unless none
    /// is needed: no bit to write and no update under way. Returns whether it waits.
    fn held_for_bitmap(&mut self, s: u32, ctx: &mut impl DeviceCtx<ArrayEvent<D::Event>>) -> bool {
        let slot = &mut self.slots[s as usize];
        if slot.upper == NO_UPPER || slot.op != Some(Op::Write) || slot.writes.is_empty() || slot.bitmap_chunks.is_some() {
            return false;
        }
        let lo = slot.writes.iter().map(|w| w.offset).min().expect("checked");
        let hi = slot.writes.iter().map(|w| w.offset + w.len).max().expect("checked");
        let b = self.bitmap.as_mut().expect("checked");
        let chunks = b.chunks_of(lo, hi);
        slot.bitmap_chunks = Some(chunks);
        b.start_write(chunks, ctx.now());
        if !b.has_dirty() && !b.update_under_way() {
            return false;
        }
        slot.stage = Stage::Bitmap;
        self.bitmap_held.push_back((s, b.next_update()));
        self.report.bitmap_waits += 1;
        if !b.update_under_way() {
            self.start_bitmap_update(ctx);
        }
        true
    }

    /// raid5d writes the bitmap's dirty pages to every member that is not faulty, a
    /// replacement being rebuilt included (md-bitmap.c, `next_active_rdev`), and waits for
    /// them; with one stripe thread, no stripe is handled meanwhile. An update with nothing
    /// to write is over at once.
    fn start_bitmap_update(&mut self, ctx: &mut impl DeviceCtx<ArrayEvent<D::Event>>) {
        let pages = self.bitmap.as_mut().expect("an md bitmap").begin_update();
        let targets: Vec<u16> = (0..self.layout.n as u16).filter(|&r| self.health.present(r as u32)).collect();
        if pages.is_empty() || targets.is_empty() {
            self.bitmap_update_done(ctx);
            return;
        }
        let s = self.alloc();
        let slot = &mut self.slots[s as usize];
        slot.upper = NO_UPPER;
        slot.process = MD_THREAD_PROCESS;
        slot.op = Some(Op::Write);
        slot.len = pages.len() as u64 * BITMAP_PAGE * targets.len() as u64;
        slot.offset = self.bitmap_base;
        slot.epoch = self.health_epoch;
        slot.rows = None;
        slot.stripe_heads = 0;
        slot.handling_ns = 0;
        slot.stats = [0; 7];
        slot.bitmap_update = true;
        slot.writes.clear();
        for &page in &pages {
            for &role in &targets {
                let offset = self.bitmap_base + page * BITMAP_PAGE;
                slot.writes.push(MemberIo { member: role, op: Op::Write, offset, len: BITMAP_PAGE });
            }
        }
        self.report.bitmap_write_bytes += slot.len;
        self.raid5d_waits = self.handler.threads.len() == 1;
        let none = self.issue_stage::<true>(s, ctx);
        debug_assert!(!none, "an update with pages writes them");
    }

    /// A bitmap update is on the members: raid5d goes on with the stripes it held, the writes
    /// held for this update go, and those that came meanwhile get the next update.
    fn bitmap_update_done(&mut self, ctx: &mut impl DeviceCtx<ArrayEvent<D::Event>>) {
        let b = self.bitmap.as_mut().expect("an md bitmap");
        b.finish_update();
        let finished = b.finished();
        self.raid5d_waits = false;
        for s in std::mem::take(&mut self.handling_held) {
            self.handle_stripes(s, true, ctx);
        }
        while let Some(&(s, update)) = self.bitmap_held.front() {
            if update > finished {
                break;
            }
            self.bitmap_held.pop_front();
            // A member may have failed while it waited: plan it for the array's health now,
            // keeping the rows and stripe heads it already holds (it locked those).
            let (rows, heads) = (self.slots[s as usize].rows, self.slots[s as usize].stripe_heads);
            self.refresh(s);
            let slot = &mut self.slots[s as usize];
            (slot.rows, slot.stripe_heads) = (rows, heads);
            self.read(s, true, ctx);
        }
        if !self.bitmap_held.is_empty() && !self.bitmap.as_ref().expect("checked").update_under_way() {
            self.start_bitmap_update(ctx);
        }
    }

    /// Enter the reading (`WRITES` false) or writing stage and issue its member I/O; returns
    /// whether there was none, so that the stage is already over. (The stage is a constant so
    /// that each use compiles to its own loop.)
    #[inline(always)]
    fn issue_stage<const WRITES: bool>(&mut self, s: u32, ctx: &mut impl DeviceCtx<ArrayEvent<D::Event>>) -> bool {
        let slot = &mut self.slots[s as usize];
        slot.stage = if WRITES { Stage::Writing } else { Stage::Reading };
        let n = if WRITES { slot.writes.len() } else { slot.reads.len() };
        slot.pending = n as u32;
        for i in 0..n {
            let slot = &self.slots[s as usize];
            let io = if WRITES { slot.writes[i] } else { slot.reads[i] };
            self.issue(s, &io, ctx);
        }
        let slot = &mut self.slots[s as usize];
        if WRITES {
            slot.writes.clear()
        } else {
            slot.reads.clear()
        }
        slot.pending == 0
    }

    /// The reads are in: handle the stripes on a thread, then write.
    fn handle_stripes(&mut self, s: u32, in_event: bool, ctx: &mut impl DeviceCtx<ArrayEvent<D::Event>>) {
        let slot = &mut self.slots[s as usize];
        slot.stage = Stage::Handling;
        if slot.handling_ns > 0 && self.raid5d_waits {
            // raid5d is waiting for a bitmap update's writes (`md_bitmap_unplug`).
            self.handling_held.push(s);
            return;
        }
        if slot.handling_ns > 0 || (!in_event && slot.writes.is_empty()) {
            let at = self.handler.threads.reserve(ctx.now(), slot.handling_ns);
            ctx.schedule(at, ArrayEvent::Handled(s));
        } else {
            self.write(s, ctx);
        }
    }

    fn write(&mut self, s: u32, ctx: &mut impl DeviceCtx<ArrayEvent<D::Event>>) {
        if self.verify.is_some() {
            self.verify_write_stage(s);
        }
        if self.issue_stage::<true>(s, ctx) {
            self.finish(s, ctx);
        }
    }

    /// A data-verified array's read stage: a host read is checked now; the reads of a write or
    /// a rebuild unit are kept for its write stage.
    fn verify_read_stage(&mut self, s: u32) {
        let v = self.verify.as_mut().expect("checked");
        let slot = &mut self.slots[s as usize];
        let mut p = Plan::default();
        p.reads.extend_from_slice(&slot.reads);
        let (offset, len) = (slot.offset, slot.len);
        if slot.upper == NO_UPPER || slot.op != Some(Op::Read) {
            // The reads a write or rebuild unit computes from: checked and kept as of now.
            match v.data.capture(&self.health, &p) {
                Ok(c) => slot.captured = Some(c),
                Err(e) => v.error(format!("read stage at {offset}: {e}")),
            }
            return;
        }
        match v.data.read(&self.health, &p, offset, len) {
            Ok(got) => {
                v.checked_bytes += len;
                if got[..] != v.image[offset as usize..(offset + len) as usize] {
                    v.error(format!("a read of {len} bytes at {offset} returned other bytes than were written"));
                }
            }
            Err(e) => v.error(format!("read at {offset}: {e}")),
        }
    }

    /// A data-verified array's write stage: the new bytes (and parity) reach the members.
    fn verify_write_stage(&mut self, s: u32) {
        let v = self.verify.as_mut().expect("checked");
        let slot = &mut self.slots[s as usize];
        let Some(captured) = slot.captured.take() else { return };
        let mut p = Plan::default();
        p.reads.extend(captured.iter().map(|(io, _)| *io));
        p.writes.extend_from_slice(&slot.writes);
        let (offset, len) = (slot.offset, slot.len);
        let result = if slot.rebuild {
            let c = self.layout.chunk;
            v.data.rebuild_captured(captured, &p, offset / c, (offset + len - 1) / c)
        } else if slot.op == Some(Op::Write) {
            let bytes = v.bytes(len);
            v.image[offset as usize..(offset + len) as usize].copy_from_slice(&bytes);
            v.data.write_captured(captured, &p, offset, &bytes)
        } else {
            Ok(())
        };
        if let Err(e) = result {
            v.error(format!("write stage at {offset}: {e}"));
        }
    }

    /// Queue one member I/O for slot `s` and let the member take what it can.
    #[inline(always)]
    fn issue(&mut self, s: u32, io: &MemberIo, ctx: &mut impl DeviceCtx<ArrayEvent<D::Event>>) {
        let now = ctx.now();
        let m = self.roles[io.member as usize];
        let process = self.process_of(s);
        let member = &mut self.members[m as usize];
        if let Some(req) = member.queue.submit_direct(s, io.op, io.offset, io.len, process, now) {
            member.device.submit(req, &mut MemberCtx { ctx: &mut *ctx, member: m, done: &mut self.done });
            return;
        }
        let parts = member.queue.submit(s, io.op, io.offset, io.len, process, now);
        debug_assert_eq!(parts, 1, "member queues do not split");
        self.feed(m, ctx);
    }

    /// Send member `m`'s queued requests while it has room.
    fn feed(&mut self, m: u16, ctx: &mut impl DeviceCtx<ArrayEvent<D::Event>>) {
        let member = &mut self.members[m as usize];
        if member.queue.dispatches_nothing() {
            return;
        }
        let now = ctx.now();
        while let Some(req) = member.queue.next_for_device(now) {
            member.device.submit(req, &mut MemberCtx { ctx: &mut *ctx, member: m, done: &mut self.done });
            if member.queue.dispatches_nothing() {
                break;
            }
        }
        if member.queue.has_armed() {
            member.queue.take_armed(&mut self.armed);
            for t in self.armed.drain(..) {
                ctx.schedule(t.at, ArrayEvent::Timer { member: m, key: t.key, token: t.token });
            }
        }
    }

    /// Handle the member completions collected so far (most events complete nothing).
    #[inline(always)]
    fn drain(&mut self, ctx: &mut impl DeviceCtx<ArrayEvent<D::Event>>) {
        if !self.done.is_empty() {
            self.drain_done(ctx);
        }
    }

    #[inline(never)]
    fn drain_done(&mut self, ctx: &mut impl DeviceCtx<ArrayEvent<D::Event>>) {
        let mut i = 0;
        while i < self.done.len() {
            let (m, tag) = self.done[i];
            i += 1;
            self.member_done(m, tag, ctx);
        }
        self.done.clear();
    }

    fn member_done(&mut self, m: u16, tag: Tag, ctx: &mut impl DeviceCtx<ArrayEvent<D::Event>>) {
        let rq = self.members[m as usize].queue.complete(tag, ctx.now());
        if !rq.is_merged() {
            // One bio, one slot: the common case, without the list below.
            self.slot_io_done(rq.host, ctx);
            self.feed(m, ctx);
            return;
        }
        let mut hosts = std::mem::take(&mut self.hosts);
        hosts.push(rq.host);
        self.members[m as usize].queue.take_merged(&rq, &mut hosts);
        for &s in &hosts {
            self.slot_io_done(s, ctx);
        }
        hosts.clear();
        self.hosts = hosts;
        self.feed(m, ctx);
    }

    /// One member I/O of slot `s` is done: the slot's stage ends with its last.
    #[inline]
    fn slot_io_done(&mut self, s: u32, ctx: &mut impl DeviceCtx<ArrayEvent<D::Event>>) {
        let slot = &mut self.slots[s as usize];
        slot.pending -= 1;
        if slot.pending == 0 {
            match slot.stage {
                // Nothing to handle and nothing to write (RAID 0/1/10 reads): done.
                Stage::Reading if slot.handling_ns == 0 && slot.writes.is_empty() => self.finish(s, ctx),
                Stage::Reading => self.handle_stripes(s, true, ctx),
                Stage::Writing => self.finish(s, ctx),
                stage => panic!("a member I/O completed for a request in stage {stage:?}"),
            }
        }
    }

    /// Slot `s` is done: release its stripes, report it, start requests that waited.
    fn finish(&mut self, s: u32, ctx: &mut impl DeviceCtx<ArrayEvent<D::Event>>) {
        let slot = &mut self.slots[s as usize];
        if slot.to_transfer {
            // A read through a hardware controller: its data now crosses the data path.
            slot.to_transfer = false;
            let at = self.controller.as_mut().expect("a controller").transfer(ctx.now(), slot.len);
            ctx.schedule(at, ArrayEvent::Accepted(s));
            return;
        }
        slot.stage = Stage::Free;
        let released = slot.rows.take();
        let rebuild = std::mem::take(&mut slot.rebuild);
        let destage = std::mem::take(&mut slot.destage);
        let barrier_lifted = std::mem::take(&mut slot.before_failure) && {
            self.barrier -= 1;
            self.barrier == 0
        };
        let op = slot.op.take().expect("a request in work has an operation");
        let bitmap_update = std::mem::take(&mut slot.bitmap_update);
        if self.stripe_cache.is_some() {
            self.update_stripe_cache(s, op, rebuild, released);
        }
        let slot = &mut self.slots[s as usize];
        slot.cached_heads.clear();
        if let Some(chunks) = slot.bitmap_chunks.take() {
            let degraded = self.health.is_degraded();
            self.bitmap.as_mut().expect("a write held bitmap chunks").end_write(chunks, ctx.now(), degraded);
        }
        let slot = &mut self.slots[s as usize];
        // Every slot that took stripe heads was admitted; the count is cleared so that a
        // slot reused without a plan (a write taken into a controller's cache) holds none.
        let heads_released = std::mem::take(&mut slot.stripe_heads);
        self.stripe_heads_in_use -= heads_released;
        if let Some(rows) = released {
            if !rebuild {
                self.unlock_rows(rows);
            }
        }
        let slot = &mut self.slots[s as usize];
        if slot.upper != NO_UPPER {
            if op.index() < 2 {
                self.host_bytes[op.index()] += slot.len;
            }
            self.host_activity.leave(ctx.now());
            ctx.complete(slot.upper);
            if !slot.joined.is_empty() {
                let mut joined = std::mem::take(&mut slot.joined);
                for &t in &joined {
                    self.finish_joined(t, ctx);
                }
                // Keep the allocation for the slot's next use.
                joined.clear();
                self.slots[s as usize].joined = joined;
            }
        }
        let slot = &mut self.slots[s as usize];
        let len = if destage { slot.dirty.1 } else { slot.len };
        self.free.push(s);
        if rebuild {
            self.rebuild_unit_done(released.expect("a rebuild unit locks its rows"), ctx);
        }
        if destage {
            self.destage_done(len, ctx);
        }
        if bitmap_update {
            self.bitmap_update_done(ctx);
        }
        if barrier_lifted {
            self.pump_rebuild(ctx);
        }
        if (released.is_some() || heads_released > 0) && !self.waiting.is_empty() {
            self.admit_waiting(ctx);
        }
    }

    /// Start the waiting requests whose stripes are now free, oldest first.
    ///
    /// Stripe heads go first come, first served: once a request whose rows are free waits for
    /// stripe heads, later ones needing stripe heads wait behind it. A request waiting for a
    /// locked row does not hold up the others. When submitters block, a request that starts
    /// wakes its process, whose held-back requests follow.
    fn admit_waiting(&mut self, ctx: &mut impl DeviceCtx<ArrayEvent<D::Event>>) {
        let mut i = 0;
        let mut heads_taken = false;
        // Rows a waiting write wants: reads behind it do not take them, or reads that keep
        // overlapping would keep a row shared and the write waiting for ever.
        self.rows_wanted.clear();
        while i < self.waiting.len() {
            let s = self.waiting[i];
            self.refresh(s);
            let needs_heads = self.slots[s as usize].stripe_heads > 0;
            let rows = self.slots[s as usize].rows;
            let write = self.row_lock(s) == RowLock::Write;
            let behind_write = !write
                && rows.is_some_and(|(a, b)| self.rows_wanted.iter().any(|&(c, d)| a <= d && c <= b));
            let held_back = behind_write || (heads_taken && needs_heads);
            let joined = !held_back && self.join_writes(s);
            let rows = self.slots[s as usize].rows;
            if !held_back && self.admit(s) {
                self.waiting.remove(i);
                let process = self.process_of(s);
                self.read(s, true, ctx);
                self.wake(process, ctx);
                continue;
            }
            debug_assert!(!joined, "a write took along writes it could not start with");
            let slot = &self.slots[s as usize];
            if needs_heads && self.stripe_heads_in_use + slot.stripe_heads > self.handler.cache_size {
                heads_taken = true;
            }
            if let (true, Some(r)) = (write, rows) {
                self.rows_wanted.push(r);
            }
            i += 1;
        }
    }

    fn report(&self, at: Time) -> DeviceReport {
        let mut member_read = 0;
        let mut member_written = 0;
        for m in &self.members {
            let d = m.queue.disk().snapshot(at);
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
        }
    }
}

impl<D: Drive> BlockDevice for Array<D> {
    type Event = ArrayEvent<D::Event>;

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
            ArrayEvent::Member(m, e) => {
                let member = &mut self.members[m as usize];
                member.device.handle(e, &mut MemberCtx { ctx: &mut *ctx, member: m, done: &mut self.done });
            }
            ArrayEvent::Handled(s) => {
                debug_assert_eq!(self.slots[s as usize].stage, Stage::Handling);
                self.write(s, ctx);
            }
            ArrayEvent::Timer { member, key, token } => {
                self.members[member as usize].queue.timer(key, token, ctx.now());
                self.feed(member, ctx);
            }
            ArrayEvent::Fail(group) => {
                self.failures_pending -= 1;
                self.fail_group(group as usize, ctx);
            }
            ArrayEvent::RebuildWake => self.pump_rebuild(ctx),
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
            m.device.end_run(now);
        }
    }

    fn has_internal_work(&self) -> bool {
        self.slots.iter().any(|s| s.stage != Stage::Free)
            || self.controller.as_ref().is_some_and(|c| c.pending())
            || self.members.iter().any(|m| m.device.has_internal_work())
    }

    fn begin_run(&mut self) -> Time {
        debug_assert!(self.slots.iter().all(|s| s.stage == Stage::Free), "a request outlived its run");
        self.members.iter_mut().map(|m| m.device.begin_run()).max().unwrap_or(0)
    }
}

/// What a run asks of an array beyond what the block layer does (see
/// `crate::target::TargetDevice`).
impl<D: Drive> Array<D> {
    /// Why the run cannot go on: a failure that would have lost the array's data (the run
    /// ends with it as its error).
    pub fn data_lost(&self) -> Option<String> {
        self.data_lost.clone()
    }

    /// Its members' (and spares') results, as of `at`.
    pub fn member_results(&self, at: Time) -> Vec<DeviceResult> {
        self.members
            .iter()
            .map(|m| DeviceResult {
                name: m.name.clone(),
                capacity_bytes: m.device.capacity(),
                scheduler: m.queue.scheduler(),
                disk: m.queue.disk().snapshot(at),
                internal: m.device.internal_report(at),
                members: Vec::new(),
            })
            .collect()
    }

    /// The run's clock exists: schedule the members' failures.
    pub fn start_run(&mut self, ctx: &mut impl DeviceCtx<ArrayEvent<D::Event>>) {
        let now = ctx.now();
        self.run_start = now;
        let mut failures = std::mem::take(&mut self.failures);
        failures.sort_by_key(|&(_, at)| at);
        for (i, &(role, at)) in failures.iter().enumerate() {
            if i > 0 && failures[i - 1].1 == at {
                self.failure_groups.last_mut().expect("a group").push(role);
                continue;
            }
            self.failure_groups.push(vec![role]);
            if at > 0 {
                self.failures_pending += 1;
                ctx.schedule(now + at, ArrayEvent::Fail((self.failure_groups.len() - 1) as u16));
            }
        }
        if failures.first().is_some_and(|&(_, at)| at == 0) {
            self.fail_group(0, ctx);
        }
        self.drain(ctx);
    }

    /// Whether the rebuild under way is done; None: no rebuild started.
    pub fn rebuild_done(&self) -> Option<bool> {
        // A lost role waiting for its rebuild, or a failure still to come, with a spare for it.
        let more = (!self.degraded_roles.is_empty() || self.failures_pending > 0)
            && !self.spares.is_empty()
            && !self.rebuild_stopped;
        match (&self.rebuild, &self.report.rebuild) {
            (Some(_), _) => Some(false),
            (None, Some(_)) => Some(!more),
            (None, None) if more => Some(false),
            (None, None) => None,
        }
    }

    /// The rebuild's bytes in sync and its target (the one under way, else the last one);
    /// None: no rebuild started.
    pub fn rebuild_progress(&self) -> Option<(u64, u64)> {
        let r = self.rebuild.as_ref().map(|r| r.report()).or(self.report.rebuild.as_ref())?;
        Some((r.done_bytes, r.target_bytes))
    }
}
